"""Data movement shared by both frontends: lazy views (slice, reverse, split) and the copy
kernels that make a new tensor (concatenate)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from solar_assets.translate.core.affine import Lin, SymTensor, view_dim
from solar_assets.translate.core.builder import ProgramBuilder, lins, loop_vars

if TYPE_CHECKING:
    from solar_assets.translate.core.context import LoweringContext


def identity_map(rank: int) -> list[Lin]:
    return [Lin.of(view_dim(d)) for d in range(rank)]


def reversed_view(x: SymTensor, axes: Sequence[int]) -> SymTensor:
    """``x`` read backwards along ``axes``."""
    old_of_new = identity_map(len(x.shape))
    for d in axes:
        old_of_new[d] = Lin.constant(x.shape[d] - 1) + Lin.of(view_dim(d), -1)
    return x.reindex(x.shape, old_of_new)


def strided_view(x: SymTensor, out_shape: Sequence[int], starts: Sequence[int], steps: Sequence[int]) -> SymTensor:
    """``x[start : : step]`` per dim (the output shape says where each dim stops)."""
    old_of_new = [Lin.constant(int(s)) + Lin.of(view_dim(d), int(st)) for d, (s, st) in enumerate(zip(starts, steps))]
    return x.reindex(out_shape, old_of_new)


def split_views(x: SymTensor, axis: int, sizes: Sequence[int]) -> list[SymTensor]:
    """Consecutive pieces of ``sizes`` along ``axis``."""
    parts, start = [], 0
    for size in sizes:
        old_of_new = identity_map(len(x.shape))
        old_of_new[axis] = Lin.constant(start) + Lin.of(view_dim(axis))
        shape = list(x.shape)
        shape[axis] = int(size)
        parts.append(x.reindex(shape, old_of_new))
        start += int(size)
    return parts


def step_view(x: SymTensor, step: Lin) -> SymTensor:
    """Row ``step`` of ``x`` along its leading dim (a loop's slice of a scanned-over tensor, ``step``
    its repeat variable or a number): a view without that dim."""
    return x.reindex(x.shape[1:], [step] + [Lin.of(view_dim(d - 1)) for d in range(1, len(x.shape))])


def every_step(y: SymTensor, length: int) -> SymTensor:
    """``y`` as the (length, *y.shape) tensor whose every row is ``y`` (a broadcast view)."""
    return y.reindex((length, *y.shape), [Lin.of(view_dim(d + 1)) for d in range(len(y.shape))])


def copy_at(c: LoweringContext, dst: SymTensor, src: object, hint: str, lead: Sequence[Lin] = ()) -> None:
    """``dst[lead..., i...] = src[i...]`` over ``dst``'s shape without ``lead`` (a loop's carry or
    its row of ``ys``); ``src`` is read as the frontend reads an operand (broadcast, constant)."""
    shape = dst.shape[len(lead):]
    v = loop_vars("i", len(shape))
    c.b.kernel(hint, list(zip(v, shape)), dst.access(list(lead) + lins(v)), "=", c.read(src, lins(v), shape))


def copy_into(b: ProgramBuilder, hint: str, out: SymTensor, src: str | SymTensor, shape: Sequence[int],
              offsets: Sequence[Lin | int], read=None) -> None:
    """``out[i + offset] = src[i]`` over ``shape``; ``read(idx)`` gives the source text where
    ``src`` is not a tensor of that shape (a broadcast operand, a constant)."""
    v = loop_vars("i", len(shape))
    idx = lins(v)
    dst = [lin + (o if isinstance(o, Lin) else Lin.constant(o)) for lin, o in zip(idx, offsets)]
    b.kernel(hint, list(zip(v, shape)), out.access(dst), "=", read(idx) if read is not None else src.access(idx))


def concatenate(b: ProgramBuilder, hint: str, out: SymTensor, parts: Sequence[tuple[Sequence[int], object]],
                axis: int, read) -> SymTensor:
    """``parts`` (shape, operand) one after another along ``axis`` of ``out``; ``read(operand, idx,
    shape)`` is the operand's read. An empty part writes nothing."""
    offset = 0
    for n, (shape, x) in enumerate(parts):
        if shape[axis] == 0:
            continue
        offsets = [0] * len(shape)
        offsets[axis] = offset
        copy_into(b, f"{hint}_part{n}", out, x, shape, offsets, read=lambda idx, x=x, shape=shape: read(x, idx, shape))
        offset += shape[axis]
    return out
