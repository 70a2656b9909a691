"""Time a callable the way a SOL comparison needs: warm-up, caches flushed, many runs, robust stats.

Only the call itself is timed; the flush runs between calls, outside the timed window. The
statistics keep every run: the median is the headline, p10–p90 the spread, and the fastest run is
what the violation audit compares with a lower bound (no run, however lucky, may beat a true
lower bound; noise only ever makes runs slower).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class TimingOptions:
    """How many runs, and how long at most: at least ``min_runs``, at most ``runs``, and no new
    run once ``budget_s`` of timed runs have passed (a slow workload still gets ``min_runs``)."""

    runs: int = 20
    warmup: int = 3
    min_runs: int = 5
    budget_s: float = 20.0

    def __post_init__(self) -> None:
        if self.runs < 1 or self.warmup < 0 or self.min_runs < 1 or not self.budget_s > 0:
            raise ValueError(f"bad timing options: {self}")


@dataclass(frozen=True)
class Timing:
    """The runs of one backend on one workload, in seconds."""

    backend: str  # "eager" or "compile"
    label: str  # "torch eager", "torch.compile", "jax eager", "jax.jit"
    times_s: tuple[float, ...] = ()
    first_call_s: float = 0.0  # the first warm-up call: includes compilation where there is one
    error: str | None = None  # why this backend has no times
    flush_bytes: int = 0
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.times_s)

    def _q(self, q: float) -> float:
        return float(np.percentile(self.times_s, q))

    @property
    def median_s(self) -> float:
        return self._q(50)

    @property
    def p10_s(self) -> float:
        return self._q(10)

    @property
    def p90_s(self) -> float:
        return self._q(90)

    @property
    def min_s(self) -> float:
        return float(min(self.times_s))

    @property
    def spread_s(self) -> float:
        """p90 − p10 of the runs."""
        return self.p90_s - self.p10_s


def time_runs(fn: Callable[[], object], options: TimingOptions, flush: Callable[[], None],
              on_run: Callable[[int, int], None] | None = None) -> tuple[float, tuple[float, ...]]:
    """(first call's seconds, the timed runs' seconds). ``flush`` runs before every call, warm-ups
    included; ``on_run(i, total)`` reports progress."""
    first = 0.0
    for i in range(options.warmup):
        flush()
        start = time.perf_counter()
        fn()
        if i == 0:
            first = time.perf_counter() - start
    times: list[float] = []
    spent = 0.0
    for i in range(options.runs):
        if i >= options.min_runs and spent >= options.budget_s:
            break
        if on_run is not None:
            on_run(i + 1, options.runs)
        flush()
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        spent += elapsed
    return first, tuple(times)
