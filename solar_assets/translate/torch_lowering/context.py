"""What a lowering sees of the node it lowers: the builder, the output's shape and dtype."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from solar_assets.ir.dtypes import ir_dtype_name
from solar_assets.translate.torch_lowering.builder import ProgramBuilder, fmt_const, lins, loop_vars
from solar_assets.translate.torch_lowering.symbolic import Lin, SymTensor



class LoweringGap(Exception):
    """A form of a known op that the tracer cannot lower yet (the message says which)."""


def ir_dtype(dtype: Any) -> str:
    """The IR dtype of a torch (or NumPy / JAX) dtype: one map for both tracers (``ir.dtypes``)."""
    name = ir_dtype_name(dtype)
    if name is None:
        raise LoweringGap(f"dtype {dtype} is not supported by the Affine Loop IR")
    return name


@dataclass
class Ctx:
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

    def new_output(self, i: int | None = None, hint: str | None = None) -> SymTensor:
        return self.b.declare(hint or self.name, self.out_shape(i), self.out_dtype(i))

    def elementwise(self, template: str, *operands: SymTensor | float | int | bool) -> SymTensor:
        """One '=' kernel over the output's shape; ``template`` formats the operands' reads."""
        shape = self.out_shape()
        out = self.new_output()
        v = loop_vars("i", len(shape))
        idx = lins(v)
        parts = [self.read(x, idx, shape) for x in operands]
        self.b.kernel(self.name, list(zip(v, shape)), out.access(idx), "=", template.format(*parts))
        return out

    def read(self, x: SymTensor | float | int | bool, idx: Sequence[Lin], shape: Sequence[int]) -> str:
        if isinstance(x, SymTensor):
            return self.b.broadcast_access(x, idx, shape)
        text = fmt_const(x)
        return f"({text})" if text.startswith("-") else text
