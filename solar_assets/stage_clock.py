"""Where a run's seconds go, stage by stage, across every process it starts (``bench/cold_path.py``).

Off unless ``SOLAR_STAGE_CLOCK`` names a directory: then each process that imports solar writes
``<dir>/<pid>.jsonl``, one line as it starts and one per finished outermost section, holding the
self time (a nested section's seconds belong to it, not to the section around it) of every
section closed since. Workers and checkers inherit the variable, so one run's directory holds
the whole tree; ``read_clock`` adds it up. Off, a section costs one environment lookup.

Stages are the cold path's, as ``bench/cold_path.py`` prints them: export, trace (lowering),
sizing, golden, IR execution, numba compile (numba's own compile events), comparison, graph,
bounds, cache-aware ILP (per part; each glpsol run its own entry), ski-slope, pictures, recording.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

CLOCK_ENV = "SOLAR_STAGE_CLOCK"
F = TypeVar("F", bound=Callable[..., Any])
WAITING = "(waiting) "
"""The prefix of a section that waits on another process (a worker on its checker, the CLI on its
workers): its seconds are that process's, counted there, so ``read_clock`` keeps them apart."""

_local = threading.local()
_write_lock = threading.Lock()
_announced: tuple[int, Path] | None = None  # the process and directory its start was written to
_numba_watched = False


def clock_dir() -> Path | None:
    value = os.environ.get(CLOCK_ENV, "").strip()
    return Path(value) if value else None


def _append(record: dict) -> None:
    directory = clock_dir()
    if directory is None:
        return
    with _write_lock, open(directory / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _announce_process() -> None:
    """The process's first line: it counts as a process start of the run."""
    global _announced
    directory = clock_dir()
    if directory is not None and _announced != (os.getpid(), directory):
        _announced = (os.getpid(), directory)
        import sys

        _append({"process": os.getpid(), "argv0": os.path.basename(sys.argv[0]) if sys.argv else ""})


def _stack() -> list[list]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
        _local.done = defaultdict(lambda: [0.0, 0])
    return stack


@contextlib.contextmanager
def timed(stage: str, part: str | None = None) -> Iterator[None]:
    """Count the seconds spent inside as ``stage`` (``part``: the hardware it is for), less those of
    the sections opened inside it."""
    if clock_dir() is None:
        yield
        return
    _announce_process()
    stack = _stack()
    frame = [stage if part is None else f"{stage} [{part}]", time.perf_counter(), 0.0]  # name, start, children
    stack.append(frame)
    try:
        yield
    finally:
        elapsed = time.perf_counter() - frame[1]
        stack.pop()
        done = _local.done[frame[0]]
        done[0] += elapsed - frame[2]
        done[1] += 1
        if stack:
            stack[-1][2] += elapsed
        else:
            _flush()


def clocked(stage: str, part: Callable[..., str] | None = None) -> Callable[[F], F]:
    """``timed(stage)`` around every call of the decorated function (``part``: the hardware, from its
    arguments)."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if clock_dir() is None:
                return fn(*args, **kwargs)
            with timed(stage, part(*args, **kwargs) if part is not None else None):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
    return decorate


_subject: str | None = None  # the workload file this process works on (a worker, its checker): one at a time


@contextlib.contextmanager
def subject(path: str | None) -> Iterator[None]:
    """The sections closed inside are charged to the workload file ``path`` as well as to their stage
    (``ClockTotals.by_file``: which files a stage's seconds went to)."""
    global _subject
    if clock_dir() is None:
        yield
        return
    saved, _subject = _subject, os.path.realpath(path) if path else None
    try:
        yield
    finally:
        _subject = saved


def _flush() -> None:
    done = dict(_local.done)
    _local.done.clear()
    if done:
        record: dict[str, Any] = {"sections": {k: [round(v[0], 6), v[1]] for k, v in done.items()}}
        if _subject is not None:
            record["file"] = _subject
        _append(record)


def watch_numba() -> None:
    """Time numba's compiles as their own stage (once per process, only with the clock on)."""
    global _numba_watched
    if _numba_watched or clock_dir() is None:
        return
    _numba_watched = True
    from numba.core import event

    class CompileSections(event.Listener):
        """numba's ``numba:compile`` start / end events as nested "numba compile" sections."""

        def __init__(self) -> None:
            self.open = threading.local()

        def _sections(self) -> list:
            if not hasattr(self.open, "sections"):
                self.open.sections = []
            return self.open.sections

        def on_start(self, event) -> None:
            section = timed("numba compile")
            section.__enter__()
            self._sections().append(section)

        def on_end(self, event) -> None:
            if self._sections():
                self._sections().pop().__exit__(None, None, None)

    event.register("numba:compile", CompileSections())


@dataclass
class ClockTotals:
    """A run's sections summed over its processes: seconds and entries per stage, process starts."""

    seconds: dict[str, float] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    processes: int = 0
    by_file: dict[str, dict[str, float]] = field(default_factory=dict)  # stage -> workload file -> seconds

    @property
    def timed_seconds(self) -> float:
        """The seconds of work: every section but the waits (``WAITING``)."""
        return sum(s for name, s in self.seconds.items() if WAITING not in name)


def read_clock(directory: Path) -> ClockTotals:
    """Add up every ``<pid>.jsonl`` of a run's clock directory."""
    totals = ClockTotals()
    seconds: dict[str, float] = defaultdict(float)
    entries: dict[str, int] = defaultdict(int)
    for path in sorted(Path(directory).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a process killed mid-line
            if "process" in record:
                totals.processes += 1
            for name, (s, n) in record.get("sections", {}).items():
                seconds[name] += s
                entries[name] += n
                if "file" in record:
                    per_file = totals.by_file.setdefault(name, {})
                    per_file[record["file"]] = per_file.get(record["file"], 0.0) + s
    totals.seconds, totals.entries = dict(seconds), dict(entries)
    return totals
