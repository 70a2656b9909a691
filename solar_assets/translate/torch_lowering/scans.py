"""Cumulative scans (``core.scan``): aten.cumsum, cumprod, cummax, cummin, logcumsumexp."""
from __future__ import annotations

import torch

from solar_assets.translate.core.scan import scan
from solar_assets.translate.torch_lowering.context import Ctx
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import lins, loop_vars

aten = torch.ops.aten

SCAN_ALIASES = {aten.cumsum: "cumsum", aten.cumprod: "cumprod", aten.logcumsumexp: "cumlogsumexp"}


@lowers(*SCAN_ALIASES)
def scan_lowering(c: Ctx, x: SymTensor, dim: int, **_) -> SymTensor:
    return scan(c.b, c.name, x, dim, SCAN_ALIASES[c.node.target.overloadpacket], c.new_output())


@lowers(aten.cummax, aten.cummin)
def cum_extreme_lowering(c: Ctx, x: SymTensor, dim: int):
    """The running max (min), and where it was last reached: PyTorch moves the index on ties
    (``x[i] >= max so far``), which is where ``x[i]`` equals the running value."""
    op = "cummax" if c.node.target.overloadpacket is aten.cummax else "cummin"
    values = scan(c.b, c.name, x, dim, op, c.new_output(0))
    return (values, lambda: _running_index(c, x, values, dim))


def _running_index(c: Ctx, x: SymTensor, values: SymTensor, dim: int) -> SymTensor:
    axis = dim % len(x.shape)
    out = c.b.declare(c.name + "_indices", x.shape, "int64")
    c.b.decls[out.base].pad_value = 0
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    prev = list(idx)
    prev[axis] = idx[axis] + Lin.constant(-1)
    order = [d for d in range(len(x.shape)) if d != axis] + [axis]
    c.b.kernel(out.base, [(v[d], x.shape[d]) for d in order], out.access(idx), "=",
               f"select({x.access(idx)} == {values.access(idx)}, {v[axis]}, {out.access(prev)})")
    return out
