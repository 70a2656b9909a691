"""Ops whose result's shape depends on the input's values (``nonzero``, ``masked_select``,
``unique``, ``unique_consecutive``), at the sample's values, and ``masked_scatter``, which reads a
data-dependent number of its source.

``torch.export`` gives such a size as an unbacked symbol (``u0``) and guards it with runtime
assertions. The tracer runs the exported program on the sample's inputs once and binds each symbol
to the size that run gave (``torch_tracer.data_dependent_sizes``), so ``Ctx.out_shape`` is concrete;
the op becomes a selection step of the IR (``Linalg``, ``ir.linalg``) whose ``count`` is that size,
and the report says the shape came from the values. The symbol's own nodes (``sym_size``, the
comparisons of the assertions, the assertions) lower to Python ints and booleans: no data moves.
"""
from __future__ import annotations

import operator
from typing import Any

import torch

from solar_assets.translate.core.affine import SymTensor
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers

aten = torch.ops.aten

_INT_OPERATORS = (operator.ge, operator.gt, operator.le, operator.lt, operator.eq, operator.ne, operator.add,
                  operator.sub, operator.mul, operator.floordiv, operator.mod, operator.neg, operator.and_,
                  operator.or_, operator.not_)


@lowers(aten.sym_size.int)
def sym_size_lowering(c: Ctx, x: SymTensor, dim: int) -> int:
    return int(x.shape[dim])


@lowers(aten.sym_numel)
def sym_numel_lowering(c: Ctx, x: SymTensor) -> int:
    n = 1
    for d in x.shape:
        n *= int(d)
    return n


def _int_operator(op: Any):
    def lower(c: Ctx, *args: Any) -> Any:
        if not all(isinstance(a, (bool, int)) for a in args):
            raise LoweringGap(f"{op.__name__} of {[type(a).__name__ for a in args]} (sizes only)")
        return op(*args)
    return lower


for _op in _INT_OPERATORS:
    lowers(_op)(_int_operator(_op))


@lowers(aten._assert_scalar)
def assert_scalar_lowering(c: Ctx, condition: Any, message: str = "") -> None:
    """A runtime assertion on a data-dependent size, checked on the size the sample gave."""
    if not bool(condition):
        raise LoweringGap(f"the sample's values break the export's assertion: {message}")


@lowers(aten.sym_constrain_range_for_size, aten.sym_constrain_range)
def constrain_range_lowering(c: Ctx, size: Any, *args: Any, **kwargs: Any) -> None:
    return None


def _count(c: Ctx, i: int | None = None) -> int:
    return int(c.out_shape(i)[0])


@lowers(aten.nonzero)
def nonzero_lowering(c: Ctx, x: SymTensor) -> SymTensor:
    return c.b.linalg(c.name, "nonzero", [x], {"count": _count(c)})[0]


@lowers(aten.masked_select)
def masked_select_lowering(c: Ctx, x: SymTensor, mask: SymTensor) -> SymTensor:
    return c.b.linalg(c.name, "masked_select", [x, mask], {"count": _count(c)})[0]


@lowers(aten.masked_scatter)
def masked_scatter_lowering(c: Ctx, x: SymTensor, mask: SymTensor, source: SymTensor) -> SymTensor:
    return c.b.linalg(c.name, "masked_scatter", [x, mask, source])[0]


@lowers(aten._unique2)
def unique_lowering(c: Ctx, x: SymTensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
                    return_counts: bool = False) -> tuple[SymTensor, ...]:
    # sorted=False leaves the order to the implementation; PyTorch's CPU one sorts, and the
    # validation says whether this run's order is that one
    return tuple(c.b.linalg(c.name, "unique", [x], {"count": _count(c, 0), "return_inverse": bool(return_inverse),
                                                     "return_counts": bool(return_counts)}))


@lowers(aten.unique_consecutive)
def unique_consecutive_lowering(c: Ctx, x: SymTensor, return_inverse: bool = False, return_counts: bool = False,
                                dim: int | None = None) -> tuple[SymTensor, ...]:
    if dim is not None:
        raise LoweringGap("unique_consecutive along a dim (runs of equal slices)")
    return tuple(c.b.linalg(c.name, "unique_consecutive", [x],
                            {"count": _count(c, 0), "return_inverse": bool(return_inverse),
                             "return_counts": bool(return_counts)}))


@lowers(aten._local_scalar_dense)
def local_scalar_lowering(c: Ctx, x: SymTensor) -> int:
    """``int(t)`` / ``t.item()`` read as a size or an index (a SymInt): its value at the sample. A
    float read from a tensor would make the IR compute with a constant: refused."""
    value = c.meta()
    if not isinstance(value, torch.SymInt):
        raise LoweringGap(f"a {type(value).__name__} read from a tensor's value (only sizes and indices are taken "
                          "at the sample's values)")
    return c.size(value)


@lowers(aten.sym_storage_offset, aten.sym_stride)
def sym_layout_lowering(c: Ctx, x: SymTensor, *args: Any) -> int:
    """A view's offset or stride that the values decide, as the sample's run gave it (it feeds only
    the export's assertions: the IR's views carry their own layout)."""
    return c.size(c.meta())
