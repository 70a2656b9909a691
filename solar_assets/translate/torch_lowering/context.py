"""What a PyTorch lowering sees of the node it lowers: the shared context over an fx node."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solar_assets.translate.core.builder import ProgramBuilder
from solar_assets.translate.core.complex import plane_dtype
from solar_assets.translate.core.context import LoweringContext, LoweringGap, ir_dtype

__all__ = ["Ctx", "LoweringGap", "ir_dtype", "resolve"]


def resolve(arg: Any, env: dict[str, Any]) -> Any:
    """A node's argument with every fx node in it replaced by its value in ``env`` (by name)."""
    import torch.fx

    if isinstance(arg, torch.fx.Node):
        return env[arg.name]
    if isinstance(arg, (list, tuple)):
        return type(arg)(resolve(a, env) for a in arg)
    return arg


@dataclass
class Ctx(LoweringContext):
    b: ProgramBuilder
    node: Any  # torch.fx.Node
    in_place_of: str | None = None
    """The IR tensor whose storage this node's value is (an in-place update, ``torch_tracer``
    IN_PLACE_UPDATES): a lowering that starts from a copy of it may skip the copy, since the
    updating output already holds its values (``solar_assets.ir.updates``)."""

    def updated_copy(self, x: Any) -> Any | None:
        """The tensor to write the node's update of ``x`` into without copying ``x``, when the node
        updates ``x``'s storage in place: a new output holding ``x``'s values (the first update of
        an input), or ``x`` itself (a later update of that output, ``x[:, ::2] *= 2`` exports as two);
        None when ``x`` must be copied."""
        base = getattr(x, "base", None)
        if self.in_place_of is None or base is None or not x.is_whole(self.b.decls[base].shape):
            return None
        if base == self.in_place_of:
            out = self.new_output()
            self.b.in_place_tensors[out.base] = base
            return out
        return x if self.b.in_place_tensors.get(base) == self.in_place_of else None

    @property
    def name(self) -> str:
        return self.node.name

    def meta(self, i: int | None = None) -> Any:
        val = self.node.meta["val"]
        return val if i is None else val[i]

    def out_shape(self, i: int | None = None) -> tuple[int, ...]:
        return tuple(self.size(s) for s in self.meta(i).shape)

    def size(self, s: Any) -> int:
        """A size of the node's meta value as an int: a data-dependent one (an unbacked symbol of
        ``torch.export``, or an expression of them) at the value the sample's values gave it
        (``ProgramBuilder.data_sizes``)."""
        node = getattr(s, "node", None)
        expr = getattr(node, "expr", None)
        if expr is None or not getattr(expr, "free_symbols", None):
            return int(s)
        missing = sorted(str(x) for x in expr.free_symbols if str(x) not in self.b.data_sizes)
        if missing:
            raise LoweringGap(f"a size that depends on the input's values ({expr}) has no value from the sample")
        return int(expr.xreplace({x: self.b.data_sizes[str(x)] for x in expr.free_symbols}))

    def out_dtype(self, i: int | None = None) -> str:
        """The output's IR dtype; of a complex output, its planes' (``translate.core.complex``)."""
        dtype = self.meta(i).dtype
        return plane_dtype(dtype) or ir_dtype(dtype)
