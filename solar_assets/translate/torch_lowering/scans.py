"""Cumulative scans (``core.scan``): aten.cumsum, cumprod, cummax, cummin, logcumsumexp."""
from __future__ import annotations

import torch

from solar_assets.translate.core.scan import scan
from solar_assets.translate.torch_lowering.context import Ctx
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import SymTensor

aten = torch.ops.aten

SCAN_ALIASES = {aten.cumsum: "cumsum", aten.cumprod: "cumprod", aten.logcumsumexp: "cumlogsumexp"}


@lowers(*SCAN_ALIASES)
def scan_lowering(c: Ctx, x: SymTensor, dim: int, **_) -> SymTensor:
    return scan(c.b, c.name, x, dim, SCAN_ALIASES[c.node.target.overloadpacket], c.new_output())


@lowers(aten.cummax, aten.cummin)
def cum_extreme_lowering(c: Ctx, x: SymTensor, dim: int):
    """The running max (min); the indices output is not lowered."""
    op = "cummax" if c.node.target.overloadpacket is aten.cummax else "cummin"
    return (scan(c.b, c.name, x, dim, op, c.new_output(0)), None)
