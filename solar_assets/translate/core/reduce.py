"""Reductions and arg-reductions, for both frontends.

A reduction is one accumulating kernel over the operand's shape whose output subscript keeps
the non-reduced dims (or a 0 for a kept size-1 dim); ``any`` / ``all`` are the ``max=`` /
``min=`` reductions of a bool (OR and AND). An arg-reduction is the extreme, then the smallest
position attaining it (the first, as PyTorch and JAX both return).
"""
from __future__ import annotations

from typing import Callable, Sequence

from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import ProgramBuilder, lins, loop_vars

ReadExpr = Callable[[str, list[Lin]], str]  # (the read of x at idx, idx) -> the accumulated value

# canonical reduction -> its update ("any" / "all" read their operand as a bool)
UPDATES = {"sum": "+=", "max": "max=", "min": "min=", "prod": "*=", "any": "max=", "all": "min="}


def reduced_axes(rank: int, dims: Sequence[int] | int | None) -> list[int]:
    """``dims`` normalised (negative counted from the end); None or empty: every dim."""
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else dims
    return sorted({d % max(1, rank) for d in dims})


def kept_shape(shape: Sequence[int], axes: Sequence[int], keepdim: bool) -> list[int]:
    return [1 if d in axes else s for d, s in enumerate(shape)] if keepdim else \
        [s for d, s in enumerate(shape) if d not in axes]


def out_index(idx: Sequence[Lin], axes: Sequence[int], keepdim: bool) -> list[Lin]:
    """The output subscript of a reduction at operand position ``idx``."""
    if keepdim:
        return [Lin.constant(0) if d in axes else lin for d, lin in enumerate(idx)]
    return [lin for d, lin in enumerate(idx) if d not in axes]


def reduce_into(b: ProgramBuilder, hint: str, x: SymTensor, axes: Sequence[int], update: str, out: SymTensor, *,
                keepdim: bool = False, expr: ReadExpr | None = None, scale: float | None = None) -> SymTensor:
    """``out[kept dims] (update)= expr(x[...]) [* scale]`` over every element of ``x``."""
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    read = x.access(idx) if expr is None else expr(x.access(idx), idx)
    b.kernel(hint, list(zip(v, x.shape)), out.access(out_index(idx, axes, keepdim)), update,
             read if scale is None else f"{read} * {scale!r}")
    return out


def reduce_canonical(b: ProgramBuilder, hint: str, x: SymTensor, axes: Sequence[int], op: str, out: SymTensor,
                     keepdim: bool = False) -> SymTensor:
    """A named reduction of ``UPDATES``; ``any`` / ``all`` of a non-bool operand test ``!= 0``."""
    expr = None
    if op in ("any", "all") and x.dtype != "bool":
        expr = lambda r, _idx: f"{r} != 0"  # noqa: E731
    return reduce_into(b, hint, x, axes, UPDATES[op], out, keepdim=keepdim, expr=expr)


def arg_reduce(b: ProgramBuilder, hint: str, x: SymTensor, axis: int, update: str, out: SymTensor,
               keepdim: bool = False) -> SymTensor:
    """First index of the max (``update`` "max=") or min along ``axis`` into ``out``."""
    axis %= len(x.shape)
    best = b.declare(hint + "_best", kept_shape(x.shape, [axis], False), x.dtype)
    reduce_into(b, hint + "_best", x, [axis], update, best)
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    keep = out_index(idx, [axis], False)
    b.kernel(hint, list(zip(v, x.shape)), out.access(out_index(idx, [axis], keepdim)), "min=",
             f"select({x.access(idx)} == {best.access(keep)}, {v[axis]}, {x.shape[axis]})")
    return out
