"""``torch._scaled_mm``: an fp8 GEMM with scales, as inference runs it on tensor cores.

``Y = (A @ B) · scale_a · scale_b (+ bias)`` in ``out_dtype``: the product of the fp8 operands
accumulates in float32 (one sum-of-products kernel whose operands stay fp8, so the contraction
runs at the fp8 peak and reads one byte an element), then one elementwise kernel applies the
scales (per tensor, shape ``()``, or per row / column) and the bias and converts to ``out_dtype``.
"""
from __future__ import annotations

import torch

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor

aten = torch.ops.aten


@lowers(aten._scaled_mm)
def scaled_mm_lowering(c: Ctx, a: SymTensor, b: SymTensor, scale_a: SymTensor, scale_b: SymTensor,
                       bias: SymTensor | None = None, scale_result: SymTensor | None = None,
                       out_dtype=None, use_fast_accum: bool = False) -> SymTensor:
    if scale_result is not None:
        raise LoweringGap("_scaled_mm with scale_result (an fp8 output scale)")
    shape = c.out_shape()
    m, n, k = a.shape[0], b.shape[1], a.shape[1]
    acc = c.b.declare(c.name + "_acc", shape, "float32")
    c.b.kernel(c.name + "_acc", [("m", m), ("n", n), ("k", k)], acc.access([Lin.of("m"), Lin.of("n")]), "+=",
               f"{a.access([Lin.of('m'), Lin.of('k')])} * {b.access([Lin.of('k'), Lin.of('n')])}")
    out = c.new_output()
    v = loop_vars("i", 2)
    idx = lins(v)
    expr = f"{acc.access(idx)} * {c.read(scale_a, idx, shape)} * {c.read(scale_b, idx, shape)}"
    if bias is not None:
        expr += f" + {c.read(bias, idx, shape)}"
    c.b.kernel(c.name, list(zip(v, shape)), out.access(idx), "=", expr)
    return out
