"""Data-movement ops: lazy views where PyTorch moves nothing, copy kernels where it copies."""
from __future__ import annotations

import operator

import torch

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.core.complex import ComplexPair, complex_aware, plane_dtype
from solar_assets.translate.core.views import concatenate, reversed_view, split_views, strided_view
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor, view_dim

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


@lowers(torch.ops.prims.copy_strided)
def copy_strided_lowering(c: Ctx, x: SymTensor, stride=None) -> SymTensor:
    """The same values laid out with other strides (a decomposition's, e.g. a parameter's gradient
    given back its layout); the IR's tensors have no strides, so it is the value itself."""
    return x


@lowers(aten.clone)
def clone_lowering(c: Ctx, x: SymTensor, **_) -> SymTensor:
    return c.b.materialize(x, c.name, force=True)


@lowers(aten._to_copy)
@complex_aware
def to_copy_lowering(c: Ctx, x: SymTensor, **kwargs) -> SymTensor:
    if isinstance(x, ComplexPair) or plane_dtype(c.meta().dtype) is not None:
        from solar_assets.translate.torch_lowering.complex_ops import to_complex_or_real

        return to_complex_or_real(c, x)
    if c.out_dtype() == x.dtype:
        return c.b.materialize(x, c.name, force=True)
    return c.elementwise("{0}", x)


@lowers(aten.slice)
def slice_lowering(c: Ctx, x: SymTensor, dim: int = 0, start=None, end=None, step: int = 1) -> SymTensor:
    dim %= len(x.shape)
    start = 0 if start is None else (start + x.shape[dim] if start < 0 else start)
    start = max(0, min(start, x.shape[dim]))
    starts, steps = [0] * len(x.shape), [1] * len(x.shape)
    starts[dim], steps[dim] = start, step
    return strided_view(x, c.out_shape(), starts, steps)


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
    dim %= len(c.out_shape())
    return concatenate(c.b, c.name, c.new_output(), [(x.shape, x) for x in xs], dim,
                       lambda x, idx, shape: x.access(idx))


@lowers(operator.getitem)
@complex_aware
def getitem_lowering(c: Ctx, values, i: int):
    value = values[i]
    if callable(value):
        value = value()
    if value is None:
        raise LoweringGap(f"output {i} of {c.node.args[0].target} is not lowered (only its main output is)")
    return value


@lowers(aten.split_with_sizes, aten.split)
def split_lowering(c: Ctx, x: SymTensor, sizes, dim: int = 0):
    dim %= len(x.shape)
    if isinstance(sizes, int):
        sizes = [min(sizes, x.shape[dim] - s) for s in range(0, x.shape[dim], sizes)]
    return split_views(x, dim, sizes)


@lowers(aten.flip)
def flip_lowering(c: Ctx, x: SymTensor, dims) -> SymTensor:
    return reversed_view(x, sorted({d % len(x.shape) for d in dims}))


@lowers(aten.repeat)
def repeat_lowering(c: Ctx, x: SymTensor, repeats) -> SymTensor:
    """``out[r*n + i] = x[i]``: one copy kernel with an affine output subscript."""
    out = c.new_output()
    offset = len(repeats) - len(x.shape)
    src_shape = [1] * offset + list(x.shape)
    rv, iv = loop_vars("r", len(repeats)), loop_vars("i", len(repeats))
    loops = list(zip(rv, repeats)) + list(zip(iv, src_shape))
    dst = [Lin.of(rv[d], src_shape[d]) + Lin.of(iv[d]) for d in range(len(repeats))]
    c.b.kernel(c.name, loops, out.access(dst), "=", x.access(lins(iv[offset:])))
    return out


@lowers(aten.constant_pad_nd)
def constant_pad_lowering(c: Ctx, x: SymTensor, pad, value: float = 0.0) -> SymTensor:
    """F.pad: pairs (before, after) from the last dim backwards; negative pads crop."""
    shape = c.out_shape()
    before = [0] * len(x.shape)
    for j in range(len(pad) // 2):
        before[len(x.shape) - 1 - j] = pad[2 * j]
    if any(p > 0 for p in pad):
        x = c.b.padded(x, float(value), c.name + "_in", [d for d in range(len(x.shape)) if before[d] > 0
                                                          or shape[d] > x.shape[d] + before[d]])
    out = c.new_output()
    v = loop_vars("i", len(shape))
    src = [Lin.of(v[d]) + Lin.constant(-before[d]) for d in range(len(shape))]
    c.b.kernel(c.name, list(zip(v, shape)), out.access(lins(v)), "=", x.access(src))
    return out


@lowers(aten._assert_tensor_metadata)
def assert_metadata_lowering(c: Ctx, *_, **__) -> None:
    """A trace-time dtype/shape assertion: no data, no cost."""
    return None


@lowers(aten.unfold)
def unfold_lowering(c: Ctx, x: SymTensor, dim: int, size: int, step: int) -> SymTensor:
    """``Tensor.unfold``: windows of ``size`` every ``step`` along ``dim`` as a new last dim; a view,
    ``out[..., p, ..., r] = x[..., p·step + r, ...]``."""
    dim %= max(1, len(x.shape))
    last = len(x.shape)  # the window dim, appended
    old_of_new = [Lin.of(view_dim(d)) for d in range(len(x.shape))]
    if x.shape:
        old_of_new[dim] = Lin.of(view_dim(dim), step) + Lin.of(view_dim(last))
    return x.reindex(c.out_shape(), old_of_new)


def _contiguous_strides(shape) -> list[int]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return strides[::-1]


def _strided_map(base_shape, size, stride, offset: int) -> list[Lin] | None:
    """Base dims as affine forms of the as_strided view's dims, when every view dim with more than
    one position steps along one base dim without carrying into the next; None otherwise."""
    cs = _contiguous_strides(base_shape)
    forms = [Lin() for _ in base_shape]
    span = [0] * len(base_shape)
    for j, (n, st) in enumerate(zip(base_shape, cs)):
        forms[j] = Lin.constant(offset // st % n if j else offset // st)
        span[j] = forms[j].const
    for d, (n, st) in enumerate(zip(size, stride)):
        if n == 1:
            continue
        cands = [j for j, (m, s) in enumerate(zip(base_shape, cs)) if m > 1 and st >= s and st % s == 0]
        if not cands or st < 0:
            return None
        j = max(cands, key=lambda j: cs[j])
        k = st // cs[j]
        forms[j] = forms[j] + Lin.of(view_dim(d), k)
        span[j] += (n - 1) * k
    if any(sp >= m for sp, m in zip(span, base_shape)):
        return None
    return forms


@lowers(aten.as_strided)
def as_strided_lowering(c: Ctx, x: SymTensor, size, stride, storage_offset=None) -> SymTensor:
    """``as_strided`` of a contiguous tensor: an index map over its storage (a view). Each view dim
    steps one base dim where that needs no carry (the usual case: strides that only restate a
    contiguous layout, windows); otherwise the storage is read flat, through a Reshape alias."""
    offset = int(storage_offset or 0)
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    val = c.node.args[0].meta.get("val")
    if val is not None:
        real = [st for n, st in zip(val.shape, val.stride()) if n != 1]
        want = [st for n, st in zip(val.shape, _contiguous_strides(tuple(val.shape))) if n != 1]
        if real != want or int(val.storage_offset()) != 0:
            raise LoweringGap("as_strided of a non-contiguous tensor (its storage order is not its index order)")
    if not x.is_whole(c.b.decls[x.base].shape):
        x = c.b.materialize(x, c.name + "_src")
    forms = _strided_map(x.shape, size, stride, offset)
    if forms is not None:
        return x.reindex(size, forms)
    numel = 1
    for s in x.shape:
        numel *= s
    flat = c.b.reshape(x, [numel], c.name + "_flat")
    lin = Lin.constant(offset)
    for d, st in enumerate(stride):
        lin = lin + Lin.of(view_dim(d), st)
    return flat.reindex(size, [lin])


@lowers(aten.diagonal)
def diagonal_lowering(c: Ctx, x: SymTensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> SymTensor:
    """``Tensor.diagonal``: a view whose last dim walks the diagonal of ``dim1`` and ``dim2``
    (shifted by ``offset``), the other dims kept in order: ``out[..., t] = x[..., t + a, ..., t + b]``."""
    rank = len(x.shape)
    dim1, dim2 = dim1 % rank, dim2 % rank
    kept = [d for d in range(rank) if d not in (dim1, dim2)]
    last = len(kept)
    old_of_new = [Lin() for _ in range(rank)]
    for new, old in enumerate(kept):
        old_of_new[old] = Lin.of(view_dim(new))
    old_of_new[dim1] = Lin.of(view_dim(last)) + Lin.constant(max(-offset, 0))
    old_of_new[dim2] = Lin.of(view_dim(last)) + Lin.constant(max(offset, 0))
    return x.reindex(c.out_shape(), old_of_new)


# The ``*_copy`` ops (what functionalisation and ``torch.*_copy`` spell): the view, then one copy.
_VIEW_COPIES = {
    aten.permute_copy: aten.permute, aten.view_copy: aten.view, aten.expand_copy: aten.expand,
    aten.t_copy: aten.t, aten.transpose_copy: aten.transpose, aten.unsqueeze_copy: aten.unsqueeze,
    aten.squeeze_copy: aten.squeeze, aten.diagonal_copy: aten.diagonal, aten.select_copy: aten.select,
    aten.slice_copy: aten.slice, aten.as_strided_copy: aten.as_strided, aten.alias_copy: aten.alias,
    aten.detach_copy: aten.detach,
}


def _view_copy(view_op):
    def lowering(c: Ctx, *args, **kwargs) -> SymTensor:
        from solar_assets.translate.torch_lowering.registry import find_lowering

        return c.b.materialize(find_lowering(view_op)(c, *args, **kwargs), c.name, force=True)
    return lowering


for _copy_op, _view_op in _VIEW_COPIES.items():
    lowers(_copy_op)(_view_copy(_view_op))


@lowers(aten.narrow_copy)
def narrow_copy_lowering(c: Ctx, x: SymTensor, dim: int, start: int, length: int) -> SymTensor:
    dim %= len(x.shape)
    start = start + x.shape[dim] if start < 0 else start
    return c.b.materialize(slice_lowering(c, x, dim, start, start + length), c.name, force=True)


@lowers(aten.unbind_copy)
def unbind_copy_lowering(c: Ctx, x: SymTensor, dim: int = 0) -> list[SymTensor]:
    """One copy per index along ``dim`` (each the ``select`` view of it)."""
    dim %= len(x.shape)
    parts = []
    for k in range(x.shape[dim]):
        old_of_new = [Lin.of(view_dim(d if d < dim else d - 1)) if d != dim else Lin.constant(k)
                      for d in range(len(x.shape))]
        view = x.reindex(c.out_shape(k), old_of_new)
        parts.append(c.elementwise("{0}", view, i=k))
    return parts


@lowers(aten.resize)
def resize_lowering(c: Ctx, x: SymTensor, size, memory_format=None) -> SymTensor:
    """``resize_`` to as many elements: the same storage seen with the new shape; to more, the new
    elements are uninitialised memory (refused by name)."""
    numel, new = 1, 1
    for s in x.shape:
        numel *= s
    for s in size:
        new *= int(s)
    if new > numel:
        raise LoweringGap("resize_ to more elements: the new ones are uninitialised memory")
    if new < numel:
        raise LoweringGap("resize_ to fewer elements (a prefix of the storage)")
    return c.b.reshape(x, [int(s) for s in size], c.name)
