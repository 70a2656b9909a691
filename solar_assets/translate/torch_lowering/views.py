"""Data-movement ops: lazy views where PyTorch moves nothing, copy kernels where it copies."""
from __future__ import annotations

import operator

import torch

from solar_assets.translate.torch_lowering.builder import lins, loop_vars
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.torch_lowering.symbolic import Lin, SymTensor, view_dim

aten = torch.ops.aten


@lowers(aten.view, aten._unsafe_view, aten.reshape)
def view_lowering(c: Ctx, x: SymTensor, shape, *_) -> SymTensor:
    return c.b.reshape(x, c.out_shape(), c.name)


@lowers(aten.permute)
def permute_lowering(c: Ctx, x: SymTensor, dims) -> SymTensor:
    return c.b.permute(x, dims)


@lowers(aten.t)
def t_lowering(c: Ctx, x: SymTensor) -> SymTensor:
    return c.b.permute(x, [1, 0]) if len(x.shape) == 2 else x


@lowers(aten.transpose)
def transpose_lowering(c: Ctx, x: SymTensor, d0: int, d1: int) -> SymTensor:
    dims = list(range(len(x.shape)))
    d0, d1 = d0 % len(dims), d1 % len(dims)
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return c.b.permute(x, dims)


@lowers(aten.expand)
def expand_lowering(c: Ctx, x: SymTensor, sizes, *_) -> SymTensor:
    return c.b.expand(x, sizes)


@lowers(aten.unsqueeze, aten.squeeze)
def unsqueeze_lowering(c: Ctx, x: SymTensor, *_) -> SymTensor:
    return c.b.reshape(x, c.out_shape(), c.name)


@lowers(aten.alias, aten.detach, aten.lift_fresh_copy)
def alias_lowering(c: Ctx, x: SymTensor, *_) -> SymTensor:
    return x


@lowers(aten.clone)
def clone_lowering(c: Ctx, x: SymTensor, **_) -> SymTensor:
    return c.b.materialize(x, c.name, force=True)


@lowers(aten._to_copy)
def to_copy_lowering(c: Ctx, x: SymTensor, **kwargs) -> SymTensor:
    if c.out_dtype() == x.dtype:
        return c.b.materialize(x, c.name, force=True)
    return c.elementwise("{0}", x)


@lowers(aten.slice)
def slice_lowering(c: Ctx, x: SymTensor, dim: int = 0, start=None, end=None, step: int = 1) -> SymTensor:
    dim %= len(x.shape)
    start = 0 if start is None else (start + x.shape[dim] if start < 0 else start)
    start = max(0, min(start, x.shape[dim]))
    old_of_new = [Lin.of(view_dim(d)) for d in range(len(x.shape))]
    old_of_new[dim] = Lin.constant(start) + Lin.of(view_dim(dim), step)
    return x.reindex(c.out_shape(), old_of_new)


@lowers(aten.select)
def select_lowering(c: Ctx, x: SymTensor, dim: int, index: int) -> SymTensor:
    dim %= len(x.shape)
    index = index + x.shape[dim] if index < 0 else index
    old_of_new = []
    for d in range(len(x.shape)):
        if d < dim:
            old_of_new.append(Lin.of(view_dim(d)))
        elif d == dim:
            old_of_new.append(Lin.constant(index))
        else:
            old_of_new.append(Lin.of(view_dim(d - 1)))
    return x.reindex(c.out_shape(), old_of_new)


@lowers(aten.cat)
def cat_lowering(c: Ctx, xs, dim: int = 0) -> SymTensor:
    shape = c.out_shape()
    dim %= len(shape)
    out = c.new_output()
    offset = 0
    for j, x in enumerate(xs):
        if x.shape[dim] == 0:
            continue
        v = loop_vars("i", len(shape))
        idx = lins(v)
        dst = list(idx)
        dst[dim] = idx[dim] + Lin.constant(offset)
        c.b.kernel(f"{c.name}_part{j}", list(zip(v, x.shape)), out.access(dst), "=", x.access(idx))
        offset += x.shape[dim]
    return out


@lowers(operator.getitem)
def getitem_lowering(c: Ctx, values, i: int):
    value = values[i]
    if callable(value):
        value = value()
    if value is None:
        raise LoweringGap(f"output {i} of {c.node.args[0].target} is not lowered (only its main output is)")
    return value
