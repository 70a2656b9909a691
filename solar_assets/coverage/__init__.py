"""How much of a directory of workloads solar covers: translated, validated, at what size.

``solar coverage DIR`` runs ``run_coverage`` over the directory's workload files with the plain
pipeline stages (no Dagster) and the pipeline's caches, and prints ``format_coverage``, whose last
line is ``coverage: N/M translated, K/M validated``. ``flop_reference`` (imported on its own: it
needs torch) counts a workload with torch's FlopCounterMode next to solar's MACs.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CoverageRow": "workload", "check_workload": "workload", "unlowered_op": "workload", "run_coverage": "runner",
    "coverage_json": "table", "coverage_summary": "table", "format_coverage": "table",
}
"""Loaded on first use: the warm path (``row_cache``) answers from the cache without loading the
chain, numba or torch."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
