"""The workload run on this host (``measured_runtime``): torch eager / torch.compile, JAX op-by-op /
jax.jit, caches flushed between runs; headroom against the SOL bounds and the violation audit.

``gpu_runner`` (the stand-alone GPU runner: standard library and torch only) and ``join`` (its
measurement file joined with a bounds file) are sub-modules. The names below are loaded on first
use, so that ``python -m solar_assets.measure.gpu_runner`` on a machine with only PyTorch imports
nothing of the rest of the stack (numpy, pydantic) through this package.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "BACKENDS": "backends", "MeasureError": "backends", "parse_backends": "backends", "runner_for": "backends",
    "CacheFlusher": "flush", "NoFlush": "flush", "cache_bytes": "flush",
    "HOST": "audit", "add_measurement": "audit", "audit": "audit",
    "Timing": "runtime", "TimingOptions": "runtime", "time_runs": "runtime",
    "MeasureOptions": "workload", "WorkloadMeasurement": "workload", "measure_workload": "workload",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
