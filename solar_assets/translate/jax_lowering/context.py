"""What a JAX lowering sees of the equation it lowers: the builder, the outputs' shapes and dtypes.

Values in the environment are ``SymTensor`` (an IR tensor seen through an affine view) or plain
Python numbers (jaxpr literals, and rank-0 integer values the tracer folded, such as a
``fori_loop`` counter), so static indices stay static.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solar_assets.translate.core.complex import plane_dtype
from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import ProgramBuilder, lins, loop_vars
from solar_assets.translate.core.context import LoweringContext, LoweringGap, ir_dtype

Value = Any  # SymTensor | int | float | bool

__all__ = ["Counter", "JCtx", "LoweringGap", "Value", "ir_dtype", "is_const", "lins", "loop_vars", "Lin",
           "SymTensor"]


@dataclass(frozen=True)
class Counter:
    """A loop counter inside a Repeat body: the integer ``lin`` (affine in the repeat variable),
    taking values in ``[lo, hi]`` over the repeat. It may only be shifted, scaled, cast between
    integer types and used as a ``dynamic_slice`` / ``dynamic_update_slice`` start (an affine
    subscript); any other use raises ``LoweringGap`` and the loop is unrolled instead."""

    lin: Lin
    lo: int
    hi: int

    def shift(self, k: int) -> "Counter":
        return Counter(self.lin + Lin.constant(k), self.lo + k, self.hi + k)

    def times(self, k: int) -> "Counter":
        return Counter(self.lin.scale(k), min(self.lo * k, self.hi * k), max(self.lo * k, self.hi * k))




def is_const(x: Value) -> bool:
    """A known number (not a tensor, not a loop counter)."""
    return not isinstance(x, (SymTensor, Counter))


@dataclass
class JCtx(LoweringContext):
    b: ProgramBuilder
    eqn: Any  # jax.core.JaxprEqn
    name: str  # a hint for tensor and step names: the primitive and the output variable

    @property
    def params(self) -> dict[str, Any]:
        return self.eqn.params

    def aval(self, i: int | None = 0) -> Any:
        return self.eqn.outvars[i or 0].aval

    def out_shape(self, i: int | None = 0) -> tuple[int, ...]:
        return tuple(int(s) for s in self.aval(i).shape)

    def out_dtype(self, i: int | None = 0) -> str:
        """The output's IR dtype; of a complex output, its planes' (``translate.core.complex``)."""
        dtype = self.aval(i).dtype
        return plane_dtype(dtype) or ir_dtype(dtype)

    def in_dtype(self, i: int) -> str:
        return ir_dtype(self.eqn.invars[i].aval.dtype)

    def fill(self, value: Value, i: int = 0) -> SymTensor:
        """A tensor of output ``i``'s shape holding ``value`` everywhere."""
        return self.elementwise("{0}", value, i=i)

    def tensor(self, x: Value, dtype: str) -> SymTensor:
        """``x`` as a tensor: a constant (always rank 0 in a jaxpr) becomes a rank-0 tensor."""
        if isinstance(x, SymTensor):
            return x
        out = self.b.declare(self.name + "_const", (), dtype)
        self.b.kernel(self.name + "_const", [], out.access([]), "=", self.read(x, [], ()))
        return out
