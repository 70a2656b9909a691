"""XLA's own cost estimate of a JAX workload, next to solar's FLOPs and bytes (docs/xla_agreement.md).

``jax.jit(f).lower(...).compile().cost_analysis()`` reports ``flops`` and ``bytes accessed`` of
the *compiled* HLO: after XLA's simplifications and fusion, counting element-wise ops as flops
(a multiply-add is 2) and, per fused kernel, its operands and results once. solar counts the
validated IR: 2 FLOPs per MAC plus one per element-wise operation, and bytes per kernel
(unfused) or graph I/O only (fused). The ratios say how far the two views agree; the document
explains where and why they differ.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class XlaCost:
    """XLA's cost analysis of one compiled workload (at the file's own size)."""

    flops: float
    bytes_accessed: float
    transcendentals: float = 0.0


def xla_cost(path: str | Path, constants: dict[str, int] | None = None) -> XlaCost:
    """Compile the workload with ``jax.jit`` on abstract arguments (shapes only) and read XLA's cost
    analysis. Raises the loader's ``WorkloadError`` for a file that does not load."""
    import jax

    from solar_assets.translate.jax_tracer import flat_function
    from solar_assets.workloads import read_workload_source
    from solar_assets.workloads.jax_loader import load_jax_workload

    w = load_jax_workload(read_workload_source(path, "jax"), constants, abstract=True)
    f, names = flat_function(w)
    compiled = jax.jit(f).lower([w.params[n] for n in names], *w.inputs).compile()
    cost: Any = compiled.cost_analysis()
    if isinstance(cost, (list, tuple)):  # older jax: one dict per computation
        cost = cost[0] if cost else {}
    cost = dict(cost or {})
    return XlaCost(flops=float(cost.get("flops", 0.0)), bytes_accessed=float(cost.get("bytes accessed", 0.0)),
                   transcendentals=float(cost.get("transcendentals", 0.0)))


def ratio(solar: float | None, xla: float | None) -> float | None:
    """solar / XLA, or None when either is missing or XLA counts nothing."""
    if solar is None or not xla:
        return None
    return float(solar) / float(xla)
