"""Scans as first-order recurrences: ``Y[..., i] = Y[..., i-1] (op) X[..., i]``.

The kernel reads its own output one step back (a pad value supplies the start), so it runs
in loop order; its FLOPs are one op per element, the cost of a real scan.
"""
from __future__ import annotations

import torch

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.torch_lowering.context import Ctx
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor

aten = torch.ops.aten


def _scan(c: Ctx, x: SymTensor, dim: int, op: str, start: float) -> SymTensor:
    dim %= len(x.shape)
    out = c.new_output()
    c.b.decls[out.base].pad_value = start
    order = [d for d in range(len(x.shape)) if d != dim] + [dim]  # the scanned loop innermost
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    prev = list(idx)
    prev[dim] = idx[dim] + Lin.constant(-1)
    c.b.kernel(c.name, [(v[d], x.shape[d]) for d in order], out.access(idx), "=",
               f"{out.access(prev)} {op} {x.access(idx)}")
    return out


@lowers(aten.cumsum)
def cumsum_lowering(c: Ctx, x: SymTensor, dim: int, **_) -> SymTensor:
    return _scan(c, x, dim, "+", 0.0)


@lowers(aten.cumprod)
def cumprod_lowering(c: Ctx, x: SymTensor, dim: int, **_) -> SymTensor:
    return _scan(c, x, dim, "*", 1.0)
