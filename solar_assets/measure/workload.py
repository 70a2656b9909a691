"""Measure one workload file on this host with each requested backend (``measured_runtime``)."""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from solar_assets.errors import SolarError
from solar_assets.measure.backends import LABELS, MeasureError, parse_backends, resolve_backends, runner_for
from solar_assets.measure.flush import CacheFlusher
from solar_assets.workloads.training import TrainSpec
from solar_assets.measure.runtime import Timing, TimingOptions, time_runs

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MeasureOptions:
    """What ``solar analyze --measure`` runs: backends in order (the first that runs is the
    report's default), the timing loop, the flush size (None: 2 × the host's caches) and the
    threads (None: every CPU this process may use, or one when one is faster in warm-up)."""

    backends: tuple[str, ...] = ("auto",)
    timing: TimingOptions = field(default_factory=TimingOptions)
    flush_bytes: int | None = None
    threads: int | None = None  # None: every CPU, or 1 where that is faster (``choose_threads``)
    per_op: bool = False  # also profile each op of the eager run and join it with the per-op SOL (``op_measure``)
    train: TrainSpec | None = None  # time the file's training step (``workloads.training``), not its forward pass

    def __post_init__(self) -> None:
        object.__setattr__(self, "backends", parse_backends(self.backends))


@dataclass
class WorkloadMeasurement:
    """Every backend's timing of one workload (a backend that failed carries its error)."""

    workload: str
    path: str
    framework: str
    timings: dict[str, Timing] = field(default_factory=dict)  # by backend, in the order asked
    notes: list[str] = field(default_factory=list)

    @property
    def default(self) -> Timing | None:
        """The first backend that produced times."""
        return next((t for t in self.timings.values() if t.ok), None)


def choose_threads(runner, threads: int, flush: Callable[[], None], trials: int = 2) -> int:
    """All ``threads``, or one when one is faster: on a shared, loaded machine OpenMP's barriers
    can make two threads ten times slower than one. Each count gets a call to warm up (compiling,
    for a compiled backend) and ``trials`` flushed calls; the fastest call wins. Leaves the runner
    set to the chosen count."""
    if runner.set_threads is None or threads <= 1:
        return threads
    best: dict[int, float] = {}
    for n in (threads, 1):
        runner.set_threads(n)
        flush()
        runner.run()
        calls = []
        for _ in range(trials):
            flush()
            start = time.perf_counter()
            runner.run()
            calls.append(time.perf_counter() - start)
        best[n] = min(calls)
    chosen = min(best, key=best.__getitem__)
    runner.set_threads(chosen)
    logger.info("%s: %d thread(s) (fastest warm-up call: %s)", runner.label, chosen,
                ", ".join(f"{n}: {t:.3g} s" for n, t in best.items()))
    return chosen


def measure_workload(path: str | Path, options: MeasureOptions | None = None,
                     progress: Callable[[str], None] | None = None,
                     flusher: Callable[[], None] | None = None) -> WorkloadMeasurement:
    """Run ``path`` with each backend of ``options``; never raises for a workload that cannot run
    (its timing carries the error, and ``notes`` says why)."""
    from solar_assets.workloads import read_workload_source

    options = options or MeasureOptions()
    src = read_workload_source(path, train=options.train)
    result = WorkloadMeasurement(src.name, str(src.path), src.framework)
    threads = options.threads or len(os.sched_getaffinity(0))
    flush = flusher or CacheFlusher(options.flush_bytes)
    for backend in resolve_backends(options.backends, src.framework):
        label = LABELS.get((src.framework, backend), backend)
        say = (lambda stage: progress(stage)) if progress else (lambda stage: None)
        say(f"measure {label}: load")
        try:
            runner = runner_for(src, backend, threads)
            say(f"measure {label}: warm-up" + (" (compiling)" if backend == "compile" else ""))
            chosen = choose_threads(runner, threads, flush) if options.threads is None else threads
            if chosen != threads:
                result.notes.append(f"{label}: {chosen} thread(s), faster than {threads} in warm-up "
                                    "(other processes share the cores)")
            first, times = time_runs(runner.run, options.timing, flush,
                                     on_run=lambda i, n: say(f"measure {label}: run {i}/{n}"))
            result.timings[backend] = Timing(backend, runner.label, times, first,
                                             flush_bytes=getattr(flush, "nbytes", 0),
                                             extra={"threads": str(chosen)})
        except MeasureError as e:
            result.timings[backend] = Timing(backend, label, error=str(e))
            result.notes.append(str(e))
        except SolarError as e:
            message = f"{src.path}: {label}: {e}"
            result.timings[backend] = Timing(backend, label, error=message)
            result.notes.append(message)
        except Exception as e:  # a framework failure (e.g. torch.compile) must not stop the others
            logger.debug("%s: %s failed", src.path, label, exc_info=True)
            message = f"{src.path}: {label} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            result.timings[backend] = Timing(backend, label, error=message)
            result.notes.append(message)
    return result
