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
    in_place_of: str | None = None
    """The IR tensor whose storage this node's value is (an in-place update, ``torch_tracer``
    IN_PLACE_UPDATES): a lowering that starts from a copy of it may skip the copy, since the
    updating output already holds its values (``solar_assets.ir.updates``)."""

    def starts_as(self, x: Any) -> bool:
        """Whether the node's output already holds ``x``'s values, so copying ``x`` in is not needed."""
        return self.in_place_of is not None and getattr(x, "base", None) == self.in_place_of \
            and x.is_whole(self.b.decls[x.base].shape)

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
