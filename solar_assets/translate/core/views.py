"""Data movement shared by both frontends: lazy views (slice, reverse, split) and the copy
kernels that make a new tensor (concatenate)."""
from __future__ import annotations

from typing import Sequence

from solar_assets.translate.core.affine import Lin, SymTensor, view_dim
from solar_assets.translate.core.builder import ProgramBuilder, lins, loop_vars


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
