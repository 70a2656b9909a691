"""What a PyTorch lowering sees of the node it lowers: the shared context over an fx node."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solar_assets.translate.core.builder import ProgramBuilder
from solar_assets.translate.core.context import LoweringContext, LoweringGap, ir_dtype

__all__ = ["Ctx", "LoweringGap", "ir_dtype"]


@dataclass
class Ctx(LoweringContext):
    b: ProgramBuilder
    node: Any  # torch.fx.Node

    @property
    def name(self) -> str:
        return self.node.name

    def meta(self, i: int | None = None) -> Any:
        val = self.node.meta["val"]
        return val if i is None else val[i]

    def out_shape(self, i: int | None = None) -> tuple[int, ...]:
        return tuple(int(s) for s in self.meta(i).shape)

    def out_dtype(self, i: int | None = None) -> str:
        return ir_dtype(self.meta(i).dtype)
