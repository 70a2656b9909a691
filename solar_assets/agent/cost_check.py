"""A cost-faithful agent IR: no more MACs than an independent count of the same program.

An agent's IR can reproduce the outputs exactly and still inflate the cost: a product computed
twice at half weight, a loop the checker cannot see is redundant. Validation compares values, not
work, so a bound built on such an IR is too high and no longer a lower bound. Each reply is
therefore compared with a reference count of the same workload at the same size:

1. the deterministic tracer's IR MACs, when the tracer lowers the workload (exact: the same
   einsum-graph counting rules);
2. otherwise ``torch.utils.flop_counter.FlopCounterMode`` (2 FLOPs per MAC) of one forward on the
   meta device, for the ops it counts (mm, addmm, bmm, convolution, attention), compared with the
   IR's *contraction* MACs: sums of products of at least two different tensors over a reduction
   loop (what those ops are in the IR; elementwise products and sums of squares are not compared).

An IR over the reference by more than ``MAC_RTOL`` is rejected with a diagnostic the agent sees on
its next attempt. With no reference (the tracer fails and FlopCounterMode counts nothing or cannot
run), no cost check is made and the verifier's notes say so.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from ir_schemas import Program
from solar_assets.errors import SolarError
from solar_assets.workloads import WorkloadSource

log = logging.getLogger(__name__)

MAC_RTOL = 1e-3
"""Relative slack over the reference before an IR is rejected (the counts are integers; this
allows a lowering that, say, counts a few border products the reference does not)."""


@dataclass(frozen=True)
class MacReference:
    """An independent MAC count of a workload and what it counts."""

    macs: int
    source: str  # "tracer" or "FlopCounterMode"
    contractions_only: bool  # compare with the IR's contraction MACs only (FlopCounterMode)


def tracer_macs(src: WorkloadSource, constants: Mapping[str, int] | None = None) -> int:
    """The MACs of the deterministic tracer's IR of the workload (raises its errors)."""
    from solar_assets.graph import build_einsum_graph

    if src.framework == "jax":
        from solar_assets.translate.jax_tracer import trace_jax

        program = trace_jax(src, dict(constants) if constants else None).program
    else:
        from solar_assets.translate import trace_torch

        program = trace_torch(src, dict(constants) if constants else None).program
    return int(build_einsum_graph(program, src.path).macs)


def flop_counter_macs(src: WorkloadSource, constants: Mapping[str, int] | None = None) -> int:
    """FlopCounterMode's FLOPs / 2 for one forward at this size, on the meta device (no memory)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from solar_assets.workloads import load_torch_workload

    with torch.device("meta"):
        w = load_torch_workload(src, dict(constants) if constants else None)
    w.model.eval()
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        w.model(*w.inputs)
    return int(counter.get_total_flops()) // 2


def mac_reference(src: WorkloadSource, constants: Mapping[str, int] | None = None) -> MacReference | None:
    """The tracer's count when it lowers the workload, else FlopCounterMode's (PyTorch only), else None."""
    try:
        return MacReference(tracer_macs(src, constants), "tracer", contractions_only=False)
    except SolarError as e:
        log.info("%s: no tracer MACs to check the agent against (%s)", src.path, str(e).splitlines()[0])
    if src.framework == "jax":
        return None
    try:
        macs = flop_counter_macs(src, constants)
    except Exception as e:  # noqa: BLE001 - a model that does not run on meta: no reference, said in the notes
        log.info("%s: FlopCounterMode could not count the workload: %s: %s", src.path, type(e).__name__, e)
        return None
    return MacReference(macs, "FlopCounterMode", contractions_only=True) if macs > 0 else None


def contraction_macs(program: Program) -> int:
    """MACs of the kernels FlopCounterMode's ops become: sums of products of two or more different
    tensors with a reduction loop (a variable the output does not use)."""
    from solar_assets.graph import build_einsum_graph

    total = 0
    for node in build_einsum_graph(program).nodes:
        pk = node.parsed
        if node.macs == 0 or pk is None:
            continue
        written = {v for a in pk.out.index for v in a.vars}
        reduces = any(lp.var not in written and lp.extent > 1 for lp in pk.kernel.loops)
        if reduces and len({a.tensor for a in pk.reads}) >= 2:
            total += node.macs
    return total


def cost_problems(program: Program, reference: MacReference | None) -> list[str]:
    """Diagnostics for an IR that counts more MACs than the reference (empty: accepted)."""
    if reference is None:
        return []
    from solar_assets.graph import build_einsum_graph

    macs = contraction_macs(program) if reference.contractions_only else int(build_einsum_graph(program).macs)
    if macs <= reference.macs * (1 + MAC_RTOL):
        return []
    what = "contraction MACs (sums of products of two tensors)" if reference.contractions_only else "MACs"
    ratio = f" ({macs / reference.macs:.4g}×)" if reference.macs else ""
    return [f"cost: the IR has {macs:,} {what} but {reference.source} counts {reference.macs:,} for the same "
            f"program{ratio}; a cost-faithful IR computes each product once: no loop that repeats work, "
            f"no product split into scaled copies"]


class CostCheck:
    """``cost_problems`` against a reference computed once, on the first reply."""

    def __init__(self, src: WorkloadSource, constants: Mapping[str, int] | None = None):
        self.src, self.constants = src, dict(constants or {})
        self._reference: MacReference | None = None
        self._known = False

    @property
    def reference(self) -> MacReference | None:
        if not self._known:
            self._reference, self._known = mac_reference(self.src, self.constants), True
        return self._reference

    def __call__(self, program: Program) -> list[str]:
        return cost_problems(program, self.reference)
