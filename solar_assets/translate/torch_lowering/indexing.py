"""Indexing ops as kernels with indirect subscripts, and topk as a TopK step.

gather / index_select / index.Tensor / embedding read ``X[I[...], ...]``; scatter writes
``Y[I[...], ...]`` after a copy of ``self`` (scatter_add with ``+=`` and init 'keep'). The
indexed tensor is made whole first (a lazy view cannot carry an indirect subscript); the index
may stay a view. Ops that accept negative indices (index.Tensor) get a normalising kernel
first, because the IR treats an out-of-range index as an error, never a wrap-around.
"""
from __future__ import annotations

from typing import Callable, Sequence

import torch

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.core.gather import gather, scatter
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor, view_dim

aten = torch.ops.aten


def _render(lins_: Sequence[Lin]) -> list[str]:
    return [lin.render() for lin in lins_]


def _normalised_index(c: Ctx, index: SymTensor, extent: int, hint: str) -> SymTensor:
    """``index`` with negative entries wrapped (+extent), as a whole int64 tensor."""
    out = c.b.declare(c.name + hint, index.shape, "int64")
    v = loop_vars("i", len(index.shape))
    r = index.access(lins(v))
    c.b.kernel(c.name + hint, list(zip(v, index.shape)), out.access(lins(v)), "=",
               f"select({r} < 0, {r} + {extent}, {r})")
    return out


@lowers(aten.gather)
def gather_lowering(c: Ctx, x: SymTensor, dim: int, index: SymTensor, sparse_grad: bool = False) -> SymTensor:
    dim %= max(1, len(x.shape))

    def subscripts(idx: list[Lin]) -> list[str]:
        subs = _render(idx)
        subs[dim] = index.access(idx)
        return subs

    return gather(c.b, c.name, x, c.new_output(), subscripts)


@lowers(aten.index_select)
def index_select_lowering(c: Ctx, x: SymTensor, dim: int, index: SymTensor) -> SymTensor:
    dim %= max(1, len(x.shape))

    def subscripts(idx: list[Lin]) -> list[str]:
        subs = _render(idx)
        subs[dim] = index.access([idx[dim]]) if index.shape else index.access([])
        return subs

    return gather(c.b, c.name, x, c.new_output(), subscripts)


@lowers(aten.embedding)
def embedding_lowering(c: Ctx, weight: SymTensor, indices: SymTensor, padding_idx: int = -1,
                       scale_grad_by_freq: bool = False, sparse: bool = False) -> SymTensor:
    return gather(c.b, c.name, weight, c.new_output(), lambda idx: [indices.access(idx[:-1]), idx[-1].render()],
                  src_hint="_table")


@lowers(aten.index.Tensor)
def index_lowering(c: Ctx, x: SymTensor, indices: Sequence[SymTensor | None]) -> SymTensor:
    """Advanced indexing ``x[i0, :, i2]``: the index tensors broadcast together; their dims come
    first when the indexed dims are not adjacent, else where the indexed dims were."""
    indices = list(indices) + [None] * (len(x.shape) - len(indices))
    present = [d for d, t in enumerate(indices) if t is not None]
    if not present:
        return x
    if any(t.dtype == "bool" for t in indices if t is not None):
        indices = _mask_positions(c, x, indices)
        if isinstance(indices, SymTensor):
            return indices
        present = [d for d, t in enumerate(indices) if t is not None]
    bshape = list(torch.broadcast_shapes(*[tuple(indices[d].shape) for d in present]))
    adjacent = present == list(range(present[0], present[-1] + 1))
    lead = present[0] if adjacent else 0  # where the broadcast index dims sit in the output

    def subscripts(idx: list[Lin]) -> list[str]:
        bidx = idx[lead:lead + len(bshape)]
        rest = iter(idx[:lead] + idx[lead + len(bshape):])
        subs = []
        for d, t in enumerate(indices):
            if t is None:
                subs.append(next(rest).render())
                continue
            norm = _normalised_index(c, SymTensor(t.base, t.shape, t.dtype, t.index), x.shape[d], f"_idx{d}")
            subs.append(c.b.broadcast_access(norm, bidx, bshape))
        return subs

    return gather(c.b, c.name, x, c.new_output(), subscripts)


def _mask_positions(c: Ctx, x: SymTensor, indices: list) -> list | SymTensor:
    """``x[mask]``, its length the sample's values decided (``torch_lowering.data_shaped``): a mask
    over every dim is a ``masked_select``; one over dims ``d0 … d0+k-1`` becomes its ``nonzero``
    positions (count × k), whose columns index those dims as integer indices do."""
    present = [d for d, t in enumerate(indices) if t is not None]
    mask = indices[present[0]] if len(present) == 1 else None
    if mask is None or mask.dtype != "bool":
        raise LoweringGap("a boolean mask together with other indices")
    d0, k = present[0], max(len(mask.shape), 1)
    count = c.out_shape()[d0]
    if d0 == 0 and k == len(x.shape):
        return c.b.linalg(c.name, "masked_select", [x, mask], {"count": count})[0]
    where = c.b.linalg(c.name + "_where", "nonzero", [mask], {"count": count})[0]
    columns = [where.reindex((count,), [Lin.of(view_dim(0)), Lin.constant(j)]) for j in range(k)]
    return [*indices[:d0], *columns, *[None] * (len(x.shape) - d0 - k)]


def _scatter(c: Ctx, x: SymTensor, dim: int, index: SymTensor, src: SymTensor | float | int, update: str) -> SymTensor:
    """A copy of ``x``, then ``src`` written (added) at ``out[..., index[j], ...]``."""
    dim %= max(1, len(x.shape))
    out = _copy_of(c, x)

    def subscripts(idx: list[Lin]) -> list[str]:
        subs = _render(idx)
        subs[dim] = index.access(idx)
        return subs

    return scatter(c.b, c.name, out, index.shape, subscripts, lambda idx: c.read(src, idx, index.shape), update)


def _copy_of(c: Ctx, x: SymTensor) -> SymTensor:
    """The node's output holding ``x``'s values: a copy, unless the node updates ``x`` in place."""
    out = c.updated_copy(x)
    if out is None and x.base in c.b.uninitialised:
        return c.new_output()  # storage without values (torch.empty) has nothing to copy
    if out is None:
        out = c.new_output()
        v = loop_vars("i", len(x.shape))
        c.b.kernel(c.name + "_copy", list(zip(v, x.shape)), out.access(lins(v)), "=", x.access(lins(v)))
    return out


@lowers(aten.index_put)
def index_put_lowering(c: Ctx, x: SymTensor, indices: Sequence[SymTensor | None], values: SymTensor | float | int,
                       accumulate: bool = False) -> SymTensor:
    """``x[i0, :, i2] = values`` (``index_copy_``, indexed assignment with tensors): a copy of ``x``
    (none when it updates ``x`` in place), then ``values`` written (added) at the indexed places."""
    indices = list(indices) + [None] * (len(x.shape) - len(indices))
    present = [d for d, t in enumerate(indices) if t is not None]
    if not present or any(t.dtype == "bool" for t in indices if t is not None):
        raise LoweringGap("index_put with a boolean mask (a data-dependent set of places)")
    bshape = list(torch.broadcast_shapes(*[tuple(indices[d].shape) for d in present]))
    adjacent = present == list(range(present[0], present[-1] + 1))
    lead = present[0] if adjacent else 0
    rest_dims = [d for d, t in enumerate(indices) if t is None]
    shape = [x.shape[d] for d in rest_dims[:lead]] + bshape + [x.shape[d] for d in rest_dims[lead:]]
    norms = {d: _normalised_index(c, SymTensor(indices[d].base, indices[d].shape, indices[d].dtype,
                                               indices[d].index), x.shape[d], f"_idx{d}") for d in present}
    out = _copy_of(c, x)

    def subscripts(idx: list[Lin]) -> list[str]:
        bidx = idx[lead:lead + len(bshape)]
        rest = iter(idx[:lead] + idx[lead + len(bshape):])
        return [next(rest).render() if t is None else c.b.broadcast_access(norms[d], bidx, bshape)
                for d, t in enumerate(indices)]

    return scatter(c.b, c.name, out, shape, subscripts, lambda idx: c.read(values, idx, shape),
                   "+=" if accumulate else "=")


def _strided_write(c: Ctx, x: SymTensor, src: SymTensor, dim: int, start: int, step: int) -> SymTensor:
    """A copy of ``x`` (none when the node updates ``x`` in place) with ``src`` written at
    ``out[..., start + step·u, ...]`` along ``dim``; ``src`` has ``x``'s other dims."""
    out = _copy_of(c, x)
    v = loop_vars("u", len(src.shape))
    idx = lins(v)
    subs = _render(idx)
    subs[dim] = Lin.of(v[dim], step).render() if start == 0 else (Lin.of(v[dim], step) + Lin.constant(start)).render()
    c.b.kernel(c.name, list(zip(v, src.shape)), f"{out.base}[{', '.join(subs)}]", "=", c.read(src, idx, src.shape))
    return out


@lowers(aten.slice_scatter)
def slice_scatter_lowering(c: Ctx, x: SymTensor, src: SymTensor, dim: int = 0, start: int | None = None,
                           end: int | None = None, step: int = 1) -> SymTensor:
    """``out = x; out[..., start:end:step, ...] = src`` (``x[:, 3:5] = k``, ``x[:, ::2] *= 2``)."""
    dim %= max(1, len(x.shape))
    first, _, stride = slice(start, end, step).indices(x.shape[dim])
    return _strided_write(c, x, src, dim, first, stride)


@lowers(aten.select_scatter)
def select_scatter_lowering(c: Ctx, x: SymTensor, src: SymTensor, dim: int, index: int) -> SymTensor:
    """``out = x; out[..., index, ...] = src``: ``src`` viewed with a unit dim at ``dim``."""
    dim %= max(1, len(x.shape))
    index %= x.shape[dim]
    shape = list(x.shape)
    shape[dim] = 1
    widened = c.b.reshape(src, shape, c.name + "_src") if isinstance(src, SymTensor) else src
    return _strided_write(c, x, widened, dim, index, 1)


@lowers(aten.scatter.value, aten.scatter.src)
def scatter_lowering(c: Ctx, x: SymTensor, dim: int, index: SymTensor, src, reduce: str | None = None) -> SymTensor:
    if reduce is not None:
        raise LoweringGap(f"scatter with reduce={reduce!r}")
    return _scatter(c, x, dim, index, src, "=")


@lowers(aten.scatter_add)
def scatter_add_lowering(c: Ctx, x: SymTensor, dim: int, index: SymTensor, src: SymTensor) -> SymTensor:
    return _scatter(c, x, dim, index, src, "+=")


@lowers(aten.topk)
def topk_lowering(c: Ctx, x: SymTensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    dim %= max(1, len(x.shape))
    values, indices = c.b.topk(c.name, x, dim, k, largest)
    return (values, indices)


@lowers(aten.sort)
def sort_lowering(c: Ctx, x: SymTensor, dim: int = -1, descending: bool = False):
    dim %= max(1, len(x.shape))
    values, indices = c.b.topk(c.name, x, dim, x.shape[dim], descending)
    return (values, indices)


@lowers(aten.diagonal_scatter)
def diagonal_scatter_lowering(c: Ctx, x: SymTensor, src: SymTensor, offset: int = 0, dim1: int = 0,
                              dim2: int = 1) -> SymTensor:
    """``out = x; out.diagonal(offset, dim1, dim2) = src``: ``src``'s last dim walks the diagonal."""
    out = _copy_of(c, x)
    rank = len(x.shape)
    dim1, dim2 = dim1 % rank, dim2 % rank
    kept = [d for d in range(rank) if d not in (dim1, dim2)]
    v = loop_vars("u", len(src.shape))
    idx = lins(v)
    subs = [Lin() for _ in range(rank)]
    for new, old in enumerate(kept):
        subs[old] = idx[new]
    subs[dim1] = idx[-1] + Lin.constant(max(-offset, 0))
    subs[dim2] = idx[-1] + Lin.constant(max(offset, 0))
    c.b.kernel(c.name, list(zip(v, src.shape)), out.access(subs), "=", c.read(src, idx, src.shape))
    return out


_SCATTER_UPDATE = {"sum": "+=", "mean": "+=", "prod": "*=", "amax": "max=", "amin": "min="}
_SCATTER_IDENTITY = {"sum": "0.0", "mean": "0.0", "prod": "1.0", "amax": "-inf", "amin": "inf"}


def _reduce_scatter(c: Ctx, x: SymTensor, dim: int, shape: Sequence[int], place: Callable[[list[Lin]], str],
                    src: SymTensor | float | int, reduce: str, include_self: bool) -> SymTensor:
    """``out = x``; each source element combined into ``out[..., place(j), ...]`` by ``reduce``.
    Without ``include_self`` the places written first take the reduction's identity (places no
    element reaches keep ``x``); ``mean`` divides by how many elements reached each place (plus one
    for ``x`` itself with ``include_self``)."""
    if reduce not in _SCATTER_UPDATE:
        raise LoweringGap(f"scatter reduction {reduce!r}")
    out = _copy_of(c, x)

    def subscripts(idx: list[Lin]) -> list[str]:
        subs = _render(idx)
        subs[dim] = place(idx)
        return subs

    if not include_self:
        scatter(c.b, c.name + "_identity", out, shape, subscripts, lambda idx: _SCATTER_IDENTITY[reduce], "=")
    scatter(c.b, c.name, out, shape, subscripts, lambda idx: c.read(src, idx, shape), _SCATTER_UPDATE[reduce])
    if reduce != "mean":
        return out
    count = c.b.declare(c.name + "_count", x.shape, "int64")
    v = loop_vars("i", len(x.shape))
    c.b.kernel(count.base + "_zero", list(zip(v, x.shape)), count.access(lins(v)), "=", "0")
    scatter(c.b, count.base, count, shape, subscripts, lambda idx: "1", "+=")
    mean = c.b.declare(c.name + "_mean", x.shape, out.dtype)
    n = f"{count.access(lins(v))}" + (" + 1" if include_self else "")
    c.b.kernel(mean.base, list(zip(v, x.shape)), mean.access(lins(v)), "=",
               f"select({count.access(lins(v))} > 0, {out.access(lins(v))} / ({n}), {out.access(lins(v))})")
    return mean


@lowers(aten.scatter_reduce)
def scatter_reduce_lowering(c: Ctx, x: SymTensor, dim: int, index: SymTensor, src: SymTensor, reduce: str,
                            include_self: bool = True) -> SymTensor:
    """``torch.scatter_reduce``: ``out[..., index[j...], ...] ⊕= src[j...]`` over ``index``'s shape."""
    dim %= max(1, len(x.shape))
    return _reduce_scatter(c, x, dim, index.shape, index.access, src, reduce, include_self)


@lowers(aten.index_reduce)
def index_reduce_lowering(c: Ctx, x: SymTensor, dim: int, index: SymTensor, src: SymTensor, reduce: str,
                          include_self: bool = True) -> SymTensor:
    """``Tensor.index_reduce``: ``out[..., index[j], ...] ⊕= src[..., j, ...]`` (a 1-D index along ``dim``)."""
    dim %= max(1, len(x.shape))
    return _reduce_scatter(c, x, dim, src.shape, lambda idx: index.access([idx[dim]]), src, reduce, include_self)


def _kth_smallest(c: Ctx, x: SymTensor, k: int, dim: int, keepdim: bool):
    """(value, index) of the ``k``-th smallest along ``dim`` (1-based): the last of a TopK of the ``k``
    smallest, seen without that dim (or with it kept at size one)."""
    dim %= max(1, len(x.shape))
    values, indices = c.b.topk(c.name, x, dim, k, False)
    rank = len(x.shape)

    def pick(t: SymTensor, i: int) -> SymTensor:
        old_of_new = []
        for d in range(rank):
            if d == dim:
                old_of_new.append(Lin.constant(k - 1))
            else:
                new = d if keepdim or d < dim else d - 1
                old_of_new.append(Lin.of(view_dim(new)))
        return t.reindex(c.out_shape(i), old_of_new)
    return pick(values, 0), pick(indices, 1)


@lowers(aten.kthvalue)
def kthvalue_lowering(c: Ctx, x: SymTensor, k: int, dim: int = -1, keepdim: bool = False):
    return _kth_smallest(c, x, int(k), dim, keepdim)


@lowers(aten.median.dim)
def median_dim_lowering(c: Ctx, x: SymTensor, dim: int, keepdim: bool = False):
    """The lower median (PyTorch's: the ⌈n/2⌉-th smallest) and where it is."""
    n = x.shape[dim % max(1, len(x.shape))]
    return _kth_smallest(c, x, (n - 1) // 2 + 1, dim, keepdim)


@lowers(aten.median.default)
def median_lowering(c: Ctx, x: SymTensor):
    numel = 1
    for s in x.shape:
        numel *= s
    flat = c.b.reshape(x, [numel], c.name + "_flat")
    values, _ = c.b.topk(c.name, flat, 0, (numel - 1) // 2 + 1, False)
    return values.reindex((), [Lin.constant((numel - 1) // 2)])


@lowers(aten.nanmedian.dim)
def nanmedian_dim_lowering(c: Ctx, x: SymTensor, dim: int = -1, keepdim: bool = False):
    """The lower median of the non-NaN values along ``dim`` and where it is: a full sort (NaN sorts
    last), the count of non-NaN values, and the element at ``(count - 1) // 2`` of the sorted row (an
    indirect read); a row of NaN only gives NaN, at index 0."""
    dim %= max(1, len(x.shape))
    rank = len(x.shape)
    values, indices = c.b.topk(c.name, x, dim, x.shape[dim], False)
    kept = [n for d, n in enumerate(x.shape) if d != dim]
    count = c.b.declare(c.name + "_count", kept, "int64")
    v = loop_vars("i", rank)
    idx = lins(v)
    at_kept = [idx[d] for d in range(rank) if d != dim]
    c.b.kernel(count.base, list(zip(v, x.shape)), count.access(at_kept), "+=",
               f"select({x.access(idx)} == {x.access(idx)}, 1, 0)")
    middle = c.b.declare(c.name + "_middle", kept, "int64")
    k = loop_vars("k", len(kept))
    n = count.access(lins(k))
    c.b.kernel(middle.base, list(zip(k, kept)), middle.access(lins(k)), "=", f"select({n} > 0, floor(({n} - 1) / 2), 0)")
    outs = []
    for i, (src, dtype) in enumerate(((values, values.dtype), (indices, "int64"))):
        out = c.b.declare(f"{c.name}_{'values' if i == 0 else 'indices'}", c.out_shape(i), dtype)
        subs = []
        ki = iter(lins(k))
        for d in range(rank):
            subs.append(middle.access(lins(k)) if d == dim else next(ki).render())
        out_idx = lins(k)
        if keepdim:
            out_idx = out_idx[:dim] + [Lin.constant(0)] + out_idx[dim:]
        c.b.kernel(out.base, list(zip(k, kept)), out.access(out_idx), "=", f"{src.base}[{', '.join(subs)}]")
        outs.append(out)
    return tuple(outs)


def _flat_copy(c: Ctx, x: SymTensor) -> SymTensor:
    """A copy of ``x`` as one row-major dim: the storage ``put`` and ``as_strided_scatter`` write into."""
    numel = 1
    for n in x.shape:
        numel *= n
    flat = c.b.declare(c.name + "_flat", [numel], x.dtype)
    v = loop_vars("i", len(x.shape))
    place, stride = Lin.constant(0), 1
    for d in range(len(x.shape) - 1, -1, -1):
        place, stride = place + Lin.of(v[d], stride), stride * x.shape[d]
    c.b.kernel(flat.base + "_copy", list(zip(v, x.shape)), flat.access([place]), "=", x.access(lins(v)))
    return flat


@lowers(aten.put)
def put_lowering(c: Ctx, x: SymTensor, index: SymTensor, source: SymTensor, accumulate: bool = False) -> SymTensor:
    """``x.put(index, source)``: into the flattened copy of ``x`` at ``index`` (negative wraps)."""
    copy = _flat_copy(c, x)
    places = _normalised_index(c, index, copy.shape[0], "_index")
    u = loop_vars("u", len(index.shape))
    c.b.kernel(c.name, list(zip(u, index.shape)), f"{copy.base}[{places.access(lins(u))}]",
               "+=" if accumulate else "=", c.read(source, lins(u), index.shape),
               init="keep" if accumulate else "identity")
    return c.b.reshape(copy, c.out_shape(), c.name + "_out")


@lowers(aten.as_strided_scatter)
def as_strided_scatter_lowering(c: Ctx, x: SymTensor, src: SymTensor, size, stride, storage_offset=None) -> SymTensor:
    """``out = x``; ``out.as_strided(size, stride, offset) = src``: each element of ``src`` at the
    flat place ``offset + Σ stride_d · u_d`` of the copy (an affine subscript of the flat storage)."""
    flat_out = _flat_copy(c, x)
    u = loop_vars("u", len(size))
    place = Lin.constant(int(storage_offset or 0))
    for d, st in enumerate(stride):
        place = place + Lin.of(u[d], int(st))
    c.b.kernel(c.name, list(zip(u, [int(s) for s in size])), flat_out.access([place]), "=",
               c.read(src, lins(u), tuple(int(s) for s in size)))
    return c.b.reshape(flat_out, c.out_shape(), c.name + "_out")
