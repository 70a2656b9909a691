"""Check many workloads: in this process, or in worker processes with a per-file time limit.

A workload can hang, exhaust memory or crash the interpreter (a numba segfault); in a worker
process it costs only its own row ("timed out after 600 s during validate", "the worker was
killed by SIGKILL (out of memory?)") and a fresh worker carries on with the next file. The
worker machinery (``solar_assets.workers``) is shared with ``solar analyze``.

A file whose finished row is in the cache (``row_cache``: keyed by its bytes, the code and the
settings, computed without importing torch) is answered from there before any worker starts, so a
repeat run over unchanged files starts no worker at all.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from solar_assets.coverage.row_cache import load_row, save_row
from solar_assets.coverage.workload import CoverageRow, check_workload, unfinished_row
from solar_assets.workers.pool import (  # noqa: F401 - re-exported: bench/zoo_bench.py imports them here
    STARTUP_LIMIT_S,
    THREAD_VARIABLES,
    run_in_workers,
    warm_up_tracer,
)

RowCallback = Callable[[int, CoverageRow], None]


def _coverage_task(path: str, cache_dir: str | None, budget: Any) -> dict:
    row = check_workload(path, cache_dir, budget).as_dict()
    save_row(cache_dir, path, row, budget)  # a finished row only: timeouts and crashes are not stored
    return row


def _coverage_unfinished(path: str, message: str, seconds: float, last_event: str | None) -> dict:
    return unfinished_row(path, message, seconds, last_event).as_dict()


def run_coverage(paths: Sequence[str | Path], cache_dir: str | Path | None = None, *, jobs: int = 1,
                 timeout_s: float | None = None, budget: Any = None, memory_limit_bytes: int | None = None,
                 on_row: RowCallback | None = None) -> list[CoverageRow]:
    """One ``CoverageRow`` per path, in order. ``jobs=0``: in this process, no limits;
    ``jobs>=1``: that many worker processes, each file limited to ``timeout_s`` seconds and
    ``memory_limit_bytes`` of resident memory. ``on_row(index, row)`` is called as each file finishes."""
    def report(index: int, result: dict) -> None:
        if on_row:
            on_row(index, CoverageRow.from_dict(result))

    results: list[dict | None] = [None] * len(paths)
    missing: list[int] = []
    for i, path in enumerate(paths):
        results[i] = load_row(cache_dir, path, budget)
        if results[i] is None:
            missing.append(i)
        else:
            report(i, results[i])

    def fresh(k: int, result: dict) -> None:
        results[missing[k]] = result
        report(missing[k], result)

    run_in_workers([paths[i] for i in missing], _coverage_task, _coverage_unfinished, cache_dir, jobs=jobs,
                   timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes, task_arg=budget, on_result=fresh,
                   durations=cache_dir)
    return [CoverageRow.from_dict(r) for r in results if r is not None]
