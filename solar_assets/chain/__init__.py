"""The stage chain: source → IR → validation → einsum graph → bounds → report row.

``config`` (``RunConfig``: the run's options), ``artifacts`` (the typed values between stages),
``stages`` (one function per stage), ``progress`` (stage-start events) and ``run`` (the chain's
state and ``validate_ir``, the part ``solar coverage`` runs). The whole chain over a file walks the
declared asset graph: ``asset_compute.plain.analyze_workload``. ``solar_assets.pipeline`` is the older
facade over the same functions.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "BoundsRow": "artifacts", "SizeChoice": "artifacts", "ValidatedIR": "artifacts", "WorkloadResult": "artifacts",
    "RunConfig": "config", "STAGES": "run", "ChainState": "run", "Kept": "run", "validate_ir": "run",
}
"""Loaded on first use, so that reading the run's options (``chain.config``) loads no numba or torch."""

__all__ = sorted([*_EXPORTS, "progress_listener"])


def __getattr__(name: str) -> Any:
    if name == "progress_listener":
        from solar_assets.progress import progress_listener

        return progress_listener
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
