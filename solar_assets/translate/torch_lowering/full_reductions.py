"""Whole-tensor reductions spelled as their own overloads: ``torch.max(x)`` / ``torch.min(x)``
(``aten.max.default``, ``aten.min.default``: one value, no indices), seen in the Reformer of
KernelBench level 4. They are ``amax`` / ``amin`` over every dimension."""
from __future__ import annotations

import torch

from solar_assets.translate.torch_lowering.context import Ctx
from solar_assets.translate.torch_lowering.norms import amax_lowering, amin_lowering
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.torch_lowering.symbolic import SymTensor

aten = torch.ops.aten


@lowers(aten.max.default)
def max_all_lowering(c: Ctx, x: SymTensor) -> SymTensor:
    return amax_lowering(c, x, tuple(range(len(x.shape))), False)


@lowers(aten.min.default)
def min_all_lowering(c: Ctx, x: SymTensor) -> SymTensor:
    return amin_lowering(c, x, tuple(range(len(x.shape))), False)
