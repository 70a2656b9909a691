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
    on the meta device (shapes only: no size is too big, nothing is computed); on the CPU where
    the forward reads a value, which the meta device cannot give."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"solar_flop_reference_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    def count(device: str) -> FlopCounterMode:
        torch.manual_seed(0)
        with torch.device(device):
            model = module.Model(*module.get_init_inputs())
            inputs = module.get_inputs()
        model.eval()
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            model(*inputs)
        return counter

    try:
        counter = count("meta")
    except RuntimeError as e:  # a model that reads a value (``.item()``) cannot run on shapes alone
        if "meta" not in str(e):
            raise
        counter = count("cpu")
    per_op = {str(op): int(n) for op, n in counter.get_flop_counts().get("Global", {}).items()}
    return int(counter.get_total_flops()), per_op


def solar_macs(path: str | Path) -> int:
    """MACs of the workload's einsum graph, traced at its own size (no validation). Raises the
    tracer's ``TranslationError`` (naming the op) where an op has no lowering."""
    return int(solar_graph(path).macs)


def solar_graph(path: str | Path):
    """The workload's einsum graph, traced at its own size (no validation)."""
    from solar_assets.graph import build_einsum_graph
    from solar_assets.translate import trace_torch
    from solar_assets.workloads import read_workload_source

    return build_einsum_graph(trace_torch(read_workload_source(path)).program)


COUNTED_OPS = ("mm", "addmm", "bmm", "baddbmm", "_scaled_mm", "convolution", "_convolution", "conv1d", "conv2d",
               "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
               "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
               "_scaled_dot_product_cudnn_attention", "scaled_dot_product_attention")
"""The op packets FlopCounterMode has a formula for (forward), so counts something for."""


def _packet(op: str) -> str:
    """``aten.mm.default`` / ``aten.mm`` -> ``mm``."""
    parts = op.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "aten" else op


def difference_reasons(graph: object, per_op: dict[str, int]) -> list[str]:
    """Why 2 × solar's MACs differ from FlopCounterMode's FLOPs, op by op (docs/flop_agreement.md):
    products a known mask removes, sums of products in ops FlopCounterMode does not count (2-norms),
    and, for an op both count, the two figures (a different decomposition or contraction order).
    Empty when they agree."""
    solar: dict[str, int] = {}
    kept: dict[str, tuple[int, int]] = {}
    for node in graph.nodes:  # type: ignore[attr-defined]
        if not node.macs:
            continue
        op = _packet(node.origin.op) if node.origin is not None else "(no origin)"
        solar[op] = solar.get(op, 0) + 2 * node.macs
        pk = node.parsed
        if pk is not None and pk.where:
            k, box = kept.get(op, (0, 0))
            kept[op] = (k + node.macs, box + pk.box_iterations * max(1, node.repeat))
    counted: dict[str, int] = {}
    for op, flops in per_op.items():
        counted[_packet(op)] = counted.get(_packet(op), 0) + int(flops)
    reasons, dense = [], dict(solar)
    for op, (k, box) in sorted(kept.items()):  # the dense count it stands for
        dense[op] += 2 * (box - k)
        reasons.append(f"{op}: a mask removes products: {100.0 * k / box:.1f} % kept (solar {solar[op]:,} of the "
                       f"dense {dense[op]:,} FlopCounterMode counts)")
    ops = sorted(set(dense) | set(counted))
    off = [op for op in ops if dense.get(op, 0) != counted.get(op, 0)]
    mine = [op for op in off if not counted.get(op, 0) and (op in COUNTED_OPS or op.startswith("solar."))]
    theirs = [op for op in off if not dense.get(op, 0)]
    if mine and theirs:  # the same products under another op's name (SDPA's math path, a whole LSTM)
        ours, their = sum(dense[op] for op in mine), sum(counted[op] for op in theirs)
        same = f"{', '.join(mine)} (solar) stands for {', '.join(theirs)} (FlopCounterMode)"
        if ours == their:
            reasons.append(f"{same}: the same products, counted under the ops eager dispatches ({their:,})")
        elif ours < their:
            reasons.append(f"{same}: FlopCounterMode counts {their - ours:,} more ({their:,} vs {ours:,}): eager "
                           f"may also run work whose result forward never returns, which torch.export drops")
        else:
            reasons.append(f"{same}: solar counts {ours - their:,} more ({ours:,} vs {their:,}): unexplained")
        off = [op for op in off if op not in mine and op not in theirs]
    for op in off:
        ours, their = dense.get(op, 0), counted.get(op, 0)
        if their == 0 and op not in COUNTED_OPS:
            reasons.append(f"{op}: sums of products in an op FlopCounterMode does not count (solar {ours:,})")
        elif ours == 0:
            reasons.append(f"{op}: FlopCounterMode counts {their:,}, solar no MACs (lowered to other ops)")
        elif ours < their:
            reasons.append(f"{op}: solar {ours:,}, FlopCounterMode {their:,}: the exported graph contracts in a "
                           f"cheaper order than eager runs (a multi-operand einsum, for one)")
        else:
            reasons.append(f"{op}: solar {ours:,}, FlopCounterMode {their:,}: solar counts more (unexplained)")
    return reasons
