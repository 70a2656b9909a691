"""FlopCounterMode's count of a workload next to solar's MACs (docs/flop_agreement.md).

``torch.utils.flop_counter.FlopCounterMode`` counts 2 FLOPs per multiply-accumulate of the ops it
knows (mm, addmm, bmm, baddbmm, convolution, scaled-dot-product attention) and nothing else; solar
counts MACs from the IR's kernels. Where FlopCounterMode counts an op, flops == 2 × MACs exactly.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path


def flop_counter_flops(path: str | Path) -> tuple[int, dict[str, int]]:
    """FlopCounterMode's total and per-op FLOPs for one forward of the workload at its own size,
    on the meta device (shapes only: no size is too big, nothing is computed)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"solar_flop_reference_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with torch.device("meta"):
        model = module.Model(*module.get_init_inputs())
        inputs = module.get_inputs()
    model.eval()
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(*inputs)
    per_op = {str(op): int(n) for op, n in counter.get_flop_counts().get("Global", {}).items()}
    return int(counter.get_total_flops()), per_op


def solar_macs(path: str | Path) -> int:
    """MACs of the workload's einsum graph, traced at its own size (no validation). Raises the
    tracer's ``TranslationError`` (naming the op) where an op has no lowering."""
    from solar_assets.graph import build_einsum_graph
    from solar_assets.translate import trace_torch
    from solar_assets.workloads import read_workload_source

    return int(build_einsum_graph(trace_torch(read_workload_source(path)).program).macs)
