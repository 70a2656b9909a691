"""Check many workloads: in this process, or in worker processes with a per-file time limit.

A workload can hang, exhaust memory or crash the interpreter (a numba segfault); in a worker
process it costs only its own row ("timed out after 600 s during validate", "the worker was
killed by SIGKILL (out of memory?)") and a fresh worker carries on with the next file. Workers are
spawned (not forked: torch and numba threads do not survive a fork) and, when several run,
each gets an equal share of the cores for its BLAS / OpenMP / numba threads: two processes with
two BLAS threads each on two cores made small GEMMs 100–1000× slower.
"""
from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solar_assets.coverage.check import CoverageRow, check_workload, unfinished_row

log = logging.getLogger(__name__)

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")
SHUTDOWN_WAIT_S = 5.0
STARTUP_LIMIT_S = 600.0  # a worker's imports (torch, numba) before its first file's clock starts

RowCallback = Callable[[int, CoverageRow], None]


Task = Callable[[str, "str | None", Any], dict]  # (path, cache_dir, task_arg) -> a picklable result
Unfinished = Callable[[str, str, float, "str | None"], dict]  # (path, message, seconds, last stage) -> result


def warm_up_tracer() -> float:
    """Export a two-op model once, so that torch.export's one-time set-up (about 2-8 s: dynamo,
    the decomposition tables) is paid at worker start and not by the first file; the seconds."""
    import warnings

    import torch

    start = time.perf_counter()

    class _Tiny(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x @ x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.export.export(_Tiny(), (torch.ones(2, 2),)).run_decompositions()
    return time.perf_counter() - start


def _coverage_task(path: str, cache_dir: str | None, budget: Any) -> dict:
    return check_workload(path, cache_dir, budget).as_dict()


def _coverage_unfinished(path: str, message: str, seconds: float, last_event: str | None) -> dict:
    return unfinished_row(path, message, seconds, last_event).as_dict()


def _serve(conn: Any, task: Task, cache_dir: str | None, task_arg: Any, threads: int | None, log_level: int) -> None:
    """A worker: run ``task`` on each path it is sent, reporting stage starts and then the result."""
    if threads:
        for variable in THREAD_VARIABLES:
            os.environ[variable] = str(threads)
    logging.basicConfig(stream=sys.stderr, level=log_level, format="%(levelname)s %(name)s: %(message)s")
    import torch  # the stages' heavy imports, before the first file's clock starts

    import solar_assets.execute  # noqa: F401
    import solar_assets.translate  # noqa: F401
    from solar_assets import pipeline

    if threads:
        torch.set_num_threads(threads)
    try:
        conn.send(("ready", warm_up_tracer()))
    except Exception:  # the warm-up is an optimisation: the first file pays it instead
        log.debug("tracer warm-up failed", exc_info=True)
        conn.send(("ready", 0.0))
    with pipeline.progress_listener(lambda workload, stage: conn.send(("stage", stage))):
        while True:
            try:
                path = conn.recv()
            except EOFError:
                return
            if path is None:
                return
            conn.send(("start", path))
            conn.send(("row", task(path, cache_dir, task_arg)))


@dataclass
class _Worker:
    process: Any
    conn: Any
    index: int | None = None
    path: str | None = None
    started: float = 0.0  # when the file was sent, then when the worker began it
    began: bool = False
    last_event: str | None = None

    @property
    def busy(self) -> bool:
        return self.index is not None

    def assign(self, index: int, path: str) -> None:
        self.index, self.path, self.started, self.began, self.last_event = index, path, time.monotonic(), False, None
        self.conn.send(path)

    def deadline(self, timeout_s: float | None) -> float | None:
        if timeout_s is None:
            return None
        return self.started + (timeout_s if self.began else max(timeout_s, STARTUP_LIMIT_S))

    def stop(self) -> None:
        """Ask the worker to exit; kill it (the process this runner started) if it does not."""
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(SHUTDOWN_WAIT_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def _start_worker(ctx: Any, task: Task, cache_dir: str | None, task_arg: Any, threads: int | None) -> _Worker:
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve, args=(child, task, cache_dir, task_arg, threads, logging.getLogger().level),
                          name="solar-coverage-worker", daemon=True)
    process.start()
    child.close()
    return _Worker(process, parent)


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker was killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
    return f"the worker exited with status {code}"


def run_coverage(paths: Sequence[str | Path], cache_dir: str | Path | None = None, *, jobs: int = 1,
                 timeout_s: float | None = None, budget: Any = None,
                 on_row: RowCallback | None = None) -> list[CoverageRow]:
    """One ``CoverageRow`` per path, in order. ``jobs=0``: in this process, no time limit;
    ``jobs>=1``: that many worker processes, each file limited to ``timeout_s`` seconds.
    ``on_row(index, row)`` is called as each file finishes."""
    def report(index: int, result: dict) -> None:
        if on_row:
            on_row(index, CoverageRow.from_dict(result))

    results = run_in_workers(paths, _coverage_task, _coverage_unfinished, cache_dir, jobs=jobs,
                             timeout_s=timeout_s, task_arg=budget, on_result=report)
    return [CoverageRow.from_dict(r) for r in results]


def run_in_workers(paths: Sequence[str | Path], task: Task, unfinished: Unfinished,
                   cache_dir: str | Path | None = None, *, jobs: int = 1, timeout_s: float | None = None,
                   task_arg: Any = None, on_result: Callable[[int, dict], None] | None = None) -> list[dict]:
    """``task(path, cache_dir, task_arg)`` for each path, in order (the engine of ``run_coverage``;
    ``bench/zoo_bench.py`` runs its own task). ``task`` must be a module-level function (workers
    are spawned); a file that times out or kills its worker gets ``unfinished(path, message,
    seconds, last stage)``. ``jobs=0``: in this process, no time limit."""
    paths = [str(p) for p in paths]
    cache = str(cache_dir) if cache_dir is not None else None
    if jobs <= 0:
        results = []
        for i, path in enumerate(paths):
            results.append(task(path, cache, task_arg))
            if on_result:
                on_result(i, results[-1])
        return results

    ctx = multiprocessing.get_context("spawn")
    threads = max(1, (os.cpu_count() or 1) // jobs) if jobs > 1 else None
    pending = deque(enumerate(paths))
    results: list[dict | None] = [None] * len(paths)
    workers: list[_Worker] = []

    def start() -> _Worker:
        return _start_worker(ctx, task, cache, task_arg, threads)

    def finish(worker: _Worker, result: dict) -> None:
        results[worker.index] = result
        if on_result:
            on_result(worker.index, result)
        worker.index = worker.path = None

    try:
        while pending or any(w.busy for w in workers):
            for i, worker in enumerate(workers):  # replace workers that died between files
                if not worker.busy and not worker.process.is_alive():
                    worker.conn.close()
                    workers[i] = start()
            while pending and len(workers) < min(jobs, len(paths)):
                workers.append(start())
            for worker in workers:
                if pending and not worker.busy:
                    worker.assign(*pending.popleft())
            busy = [w for w in workers if w.busy]
            now = time.monotonic()
            wait_s = None if timeout_s is None else max(0.0, min(w.deadline(timeout_s) for w in busy) - now)
            multiprocessing.connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy], wait_s)
            for i, worker in enumerate(workers):
                if worker.busy:
                    _poll(worker, finish)
                    if not worker.process.is_alive() or (worker.busy and _overdue(worker, timeout_s)):
                        if worker.busy:  # killed for its time, or died on its own: record, replace
                            elapsed = time.monotonic() - worker.started
                            if worker.process.is_alive():
                                message = f"timed out after {timeout_s:g} s"
                                worker.process.kill()
                                worker.process.join()
                            else:
                                worker.process.join()
                                message = _exit_reason(worker.process.exitcode)
                            log.warning("%s: %s", worker.path, message)
                            finish(worker, unfinished(worker.path, message, elapsed, worker.last_event))
                        worker.conn.close()
                        workers[i] = start()
    finally:
        for worker in workers:
            worker.stop()
    return [r for r in results if r is not None]


def _overdue(worker: _Worker, timeout_s: float | None) -> bool:
    deadline = worker.deadline(timeout_s)
    return deadline is not None and time.monotonic() > deadline


def _poll(worker: _Worker, finish: Callable[[_Worker, CoverageRow], None]) -> None:
    """Read what the worker sent: stage starts, then its row."""
    try:
        while worker.busy and worker.conn.poll():
            kind, payload = worker.conn.recv()
            if kind == "start":
                worker.started, worker.began = time.monotonic(), True
            elif kind == "stage":
                worker.last_event = payload
            elif kind == "ready":
                log.debug("worker ready (tracer warm-up %.1f s)", payload)
            else:
                finish(worker, payload)
    except (EOFError, OSError):
        pass  # it died: the caller sees the process gone
