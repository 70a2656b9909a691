"""What a lowering sees, for both frontends: the builder, the output's shape and dtype, and the
one way an elementwise kernel is written. A frontend's context says where shapes come from (an fx
node's ``meta['val']``, a jaxpr equation's ``aval``); everything else is shared."""
from __future__ import annotations

from typing import Sequence

from solar_assets.ir.dtypes import ir_dtype_name
from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import ProgramBuilder, fmt_const, lins, loop_vars

Operand = SymTensor | float | int | bool


class LoweringGap(Exception):
    """A form of a known op that the tracer cannot lower yet (the message says which)."""


def ir_dtype(dtype: object) -> str:
    """The IR dtype of a torch (or NumPy / JAX) dtype: one map for both tracers (``ir.dtypes``)."""
    name = ir_dtype_name(dtype)
    if name is None:
        raise LoweringGap(f"dtype {dtype} is not supported by the Affine Loop IR")
    return name


class LoweringContext:
    """Base of the frontends' contexts: ``b`` the builder, ``name`` the hint for tensor and step
    names; subclasses give ``out_shape(i)`` and ``out_dtype(i)`` of output ``i`` (None: the only one)."""

    b: ProgramBuilder
    name: str

    def out_shape(self, i: int | None = None) -> tuple[int, ...]:
        raise NotImplementedError

    def out_dtype(self, i: int | None = None) -> str:
        raise NotImplementedError

    def new_output(self, i: int | None = None, hint: str | None = None) -> SymTensor:
        return self.b.declare(hint or self.name, self.out_shape(i), self.out_dtype(i))

    def elementwise(self, template: str, *operands: Operand, i: int | None = None) -> SymTensor:
        """One '=' kernel over output ``i``'s shape; ``template`` formats the operands' reads."""
        shape = self.out_shape(i)
        out = self.new_output(i)
        v = loop_vars("i", len(shape))
        idx = lins(v)
        parts = [self.read(x, idx, shape) for x in operands]
        self.b.kernel(self.name, list(zip(v, shape)), out.access(idx), "=", template.format(*parts))
        return out

    def read(self, x: Operand, idx: Sequence[Lin], shape: Sequence[int]) -> str:
        """``x`` read at output position ``idx`` (broadcast by numpy rules), or a constant's text."""
        if isinstance(x, SymTensor):
            return self.b.broadcast_access(x, idx, shape)
        text = fmt_const(x)
        return f"({text})" if text.startswith("-") else text
