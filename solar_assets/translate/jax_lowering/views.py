"""Data movement: lazy affine views where XLA need not copy, copy kernels where a new array is made.

broadcast_in_dim (which is also how ``expand_dims`` traces), transpose, squeeze, slice, rev, split and dynamic_slice at a
static index are views folded into their readers' subscripts; reshape is a view when it only
splits dims, else an alias of a contiguous copy; concatenate, pad, dynamic_update_slice and
iota write new tensors.
"""
from __future__ import annotations

from solar_assets.translate.jax_lowering.context import Counter, JCtx, Lin, LoweringGap, SymTensor, is_const, lins, loop_vars
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.translate.core.affine import view_dim
from solar_assets.translate.core.gather import gather, scatter
from solar_assets.translate.core.views import (
    concatenate, copy_into, reversed_view, split_views, strided_view,
)


def padded_whole(c: JCtx, x: SymTensor, value: float, hint: str) -> SymTensor:
    """``x`` on a whole base tensor whose out-of-range reads give ``value`` (a view of part of a
    tensor is copied first: out of the view's range is not out of its base's)."""
    x = c.b.materialize(x, hint)
    return c.b.padded(x, value, hint)


def window_source(c: JCtx, x: SymTensor, value, padding, base_dilation, hint: str) -> tuple[SymTensor, list[int]]:
    """The operand of a window reduction as XLA sees it: dilated by ``base_dilation`` (holes hold
    ``value``) and padded by ``padding`` (``value`` again; a negative pad crops), with the low
    offset each window subscript subtracts (``core.window.window_index``'s ``pad``). A constant
    value with no dilation is a padded read of ``x``; otherwise the dilated, padded operand is
    written out: filled with ``value`` (a number or a rank-0 tensor), then ``x`` placed strided."""
    rank = len(x.shape)
    pads = [(int(lo), int(hi)) for lo, hi in padding]
    dil = [int(d) for d in (base_dilation or [1] * rank)]
    if any(d < 1 for d in dil):
        raise LoweringGap(f"a base dilation of {tuple(dil)}")
    grows = any(lo > 0 or hi > 0 for lo, hi in pads)
    if all(d == 1 for d in dil):
        if not grows:  # no padding, or only crops: every window lies inside x
            return x, [lo for lo, _ in pads]
        if is_const(value):
            return padded_whole(c, x, float(value), hint), [lo for lo, _ in pads]
    full = [max(lo, 0) + ((n - 1) * d + 1 if n else 0) + max(hi, 0) for n, d, (lo, hi) in zip(x.shape, dil, pads)]
    out = c.b.declare(hint, full, x.dtype)
    v = loop_vars("i", rank)
    c.b.kernel(hint + "_fill", list(zip(v, full)), out.access(lins(v)), "=", c.read(value, [], ()))
    dst = [Lin.of(var, d) + Lin.constant(max(lo, 0)) for var, d, (lo, _) in zip(v, dil, pads)]
    c.b.kernel(hint + "_place", list(zip(v, x.shape)), out.access(dst), "=", x.access(lins(v)))
    return out, [min(lo, 0) for lo, _ in pads]


@lowers("broadcast_in_dim")
def broadcast_in_dim_lowering(c: JCtx, x, *dyn, shape, broadcast_dimensions, **_):
    if dyn:
        raise LoweringGap("broadcast_in_dim with dynamic shapes")
    if is_const(x):
        return c.fill(x)
    old_of_new = [Lin.constant(0) if x.shape[i] == 1 and shape[d] != 1 else Lin.of(view_dim(d))
                  for i, d in enumerate(broadcast_dimensions)]
    return x.reindex(tuple(int(s) for s in shape), old_of_new)


@lowers("reshape")
def reshape_lowering(c: JCtx, x, *dyn, new_sizes, dimensions=None, **_):
    if dyn or dimensions is not None:
        raise LoweringGap("reshape with dimensions or dynamic shapes")
    if is_const(x):
        return c.fill(x)
    return c.b.reshape(x, c.out_shape(), c.name)


@lowers("squeeze")
def squeeze_lowering(c: JCtx, x, *, dimensions):
    return c.b.reshape(x, c.out_shape(), c.name)


@lowers("transpose")
def transpose_lowering(c: JCtx, x, *, permutation):
    return c.b.permute(x, permutation)


@lowers("rev")
def rev_lowering(c: JCtx, x, *, dimensions):
    return reversed_view(x, dimensions)


@lowers("slice")
def slice_lowering(c: JCtx, x, *, start_indices, limit_indices, strides=None):
    return strided_view(x, c.out_shape(), start_indices, strides or [1] * len(x.shape))


@lowers("split")
def split_lowering(c: JCtx, x, *, sizes, axis):
    return split_views(x, axis, sizes)


def _starts(c: JCtx, x: SymTensor, starts, sizes) -> list[Lin | str]:
    """Per dim, where the window starts: an affine start (a constant, or a loop counter, ``Counter``),
    or, for a start read from data, the read of a one-element int tensor holding it clamped into
    ``[0, dim - size]`` as JAX clamps it (a start tensor the window subscripts read indirectly)."""
    out: list[Lin | str] = []
    for d, (s, dim, size) in enumerate(zip(starts, x.shape, sizes)):
        if isinstance(s, Counter):
            if s.lo < 0 or s.hi > dim - size:
                raise LoweringGap(f"a loop-counter start in [{s.lo}, {s.hi}] that JAX clamps into [0, {dim - size}]")
            out.append(s.lin)
        elif is_const(s):
            out.append(Lin.constant(max(0, min(int(s), dim - size))))
        else:
            start = c.b.declare(f"{c.name}_start{d}", [1], "int64")
            c.b.kernel(start.base, [("j", 1)], start.access([Lin.of("j")]), "=",
                       f"min(max({c.read(s, [], ())}, 0), {dim - size})")
            out.append(start.access([Lin.constant(0)]))
    return out


def _window_subscripts(starts: list[Lin | str]):
    def subscripts(idx: list[Lin]) -> list[str]:
        return [(s + i).render() if isinstance(s, Lin) else (f"{s} + {i.render()}" if i != Lin() else s)
                for s, i in zip(starts, idx)]
    return subscripts


@lowers("dynamic_slice")
def dynamic_slice_lowering(c: JCtx, x, *starts, slice_sizes):
    starts = _starts(c, x, starts[: len(x.shape)], slice_sizes)
    if all(isinstance(s, Lin) for s in starts):
        old_of_new = [s + Lin.of(view_dim(d)) for d, s in enumerate(starts)]
        return x.reindex(c.out_shape(), old_of_new)
    return gather(c.b, c.name, x, c.new_output(), _window_subscripts(starts))


@lowers("dynamic_update_slice")
def dynamic_update_slice_lowering(c: JCtx, x, update, *starts):
    starts = _starts(c, c.tensor(x, c.out_dtype()), starts, update.shape)
    out = c.elementwise("{0}", x)
    if all(isinstance(s, Lin) for s in starts):
        copy_into(c.b, c.name + "_update", out, update, update.shape, starts,
                  read=lambda idx: c.read(update, idx, update.shape))
        return out
    return scatter(c.b, c.name + "_update", out, update.shape, _window_subscripts(starts),
                   lambda idx: c.read(update, idx, update.shape), "=")


@lowers("concatenate")
def concatenate_lowering(c: JCtx, *xs, dimension):
    parts = []
    for x in xs:
        shape = list(c.out_shape())
        shape[dimension] = x.shape[dimension] if not is_const(x) else 1
        parts.append((shape, x))
    return concatenate(c.b, c.name, c.new_output(), parts, dimension, c.read)


@lowers("pad")
def pad_lowering(c: JCtx, x, value, *, padding_config):
    """``lax.pad``: low / high edges (negative ones crop) and interior padding, with a constant
    or a traced rank-0 padding value."""
    if all(int(lo) == int(hi) == int(interior) == 0 for lo, hi, interior in padding_config):
        return x
    if is_const(value) and all(int(interior) == 0 for _, _, interior in padding_config):
        # out[p] = x[p - lo], reading the pad value outside x (negative lo / hi crop)
        old_of_new = [Lin.of(view_dim(d)) + Lin.constant(-int(lo)) for d, (lo, _, _) in enumerate(padding_config)]
        view = padded_whole(c, x, float(value), c.name + "_src").reindex(c.out_shape(), old_of_new)
        return c.elementwise("{0}", view)
    # interior padding or a traced value: fill, then place x strided; negative edges crop that
    # result (a view)
    if any(int(interior) < 0 for _, _, interior in padding_config):
        raise LoweringGap("negative interior padding")
    full = [max(int(lo), 0) + n + max(n - 1, 0) * int(interior) + max(int(hi), 0)
            for n, (lo, hi, interior) in zip(x.shape, padding_config)]
    out = c.b.declare(c.name, full, c.out_dtype())
    v = loop_vars("i", len(full))
    c.b.kernel(c.name + "_fill", list(zip(v, full)), out.access(lins(v)), "=", c.read(value, [], ()))
    v = loop_vars("i", len(x.shape))
    dst = [Lin.of(var, int(interior) + 1) + Lin.constant(max(int(lo), 0))
           for var, (lo, _, interior) in zip(v, padding_config)]
    c.b.kernel(c.name + "_interior", list(zip(v, x.shape)), out.access(dst), "=", x.access(lins(v)))
    if all(lo >= 0 and hi >= 0 for lo, hi, _ in padding_config):
        return out
    crop = [Lin.of(view_dim(d)) + Lin.constant(max(-int(lo), 0)) for d, (lo, _, _) in enumerate(padding_config)]
    return out.reindex(c.out_shape(), crop)


@lowers("iota")
def iota_lowering(c: JCtx, *, dimension, **_):
    shape = c.out_shape()
    out = c.new_output()
    v = loop_vars("i", len(shape))
    c.b.kernel(c.name, list(zip(v, shape)), out.access(lins(v)), "=", v[dimension])
    return out
