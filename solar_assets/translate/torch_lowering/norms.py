"""Softmax, normalisations and the ATen reductions (sums, extremes, any / all, arg-reductions) on
the lowering core (``core.reduce``): chains of reductions and pointwise kernels."""
from __future__ import annotations

import torch

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.core.reduce import (
    ReadExpr, arg_reduce, kept_shape, out_index, reduce_canonical, reduce_into, reduced_axes,
)
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor

aten = torch.ops.aten


def _row_stat(c: Ctx, x: SymTensor, dims, hint: str, update: str, expr: ReadExpr | None = None
              ) -> tuple[SymTensor, list[int]]:
    """A reduction of ``x`` over ``dims`` into a new tensor over the kept dims; returns it and the
    reduced axes (for ``_at``)."""
    axes = reduced_axes(len(x.shape), dims)
    stat = c.b.declare(hint, kept_shape(x.shape, axes, False), x.dtype)
    reduce_into(c.b, hint, x, axes, update, stat, expr=expr)
    return stat, axes


def _at(stat: SymTensor, idx, axes) -> str:
    """``stat`` read at operand position ``idx`` (its reduced axes dropped)."""
    return stat.access(out_index(idx, axes, False))


@lowers(aten._softmax, aten._log_softmax)
def softmax_lowering(c: Ctx, x: SymTensor, dim: int, half_to_float: bool = False) -> SymTensor:
    log = c.node.target.overloadpacket is aten._log_softmax
    mx, keep = _row_stat(c, x, [dim], c.name + "_max", "max=")
    total, _ = _row_stat(c, x, [dim], c.name + "_sum", "+=", lambda r, idx: f"exp({r} - {_at(mx, idx, keep)})")
    out = c.new_output()
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    r, m, s = x.access(idx), _at(mx, idx, keep), _at(total, idx, keep)
    expr = f"{r} - {m} - log({s})" if log else f"exp({r} - {m}) / {s}"
    c.b.kernel(c.name, list(zip(v, x.shape)), out.access(idx), "=", expr)
    return out


@lowers(aten.native_layer_norm)
def layer_norm_lowering(c: Ctx, x: SymTensor, normalized_shape, weight, bias, eps: float):
    first = len(x.shape) - len(normalized_shape)
    out, mean, var = _normalize(c, x, list(range(first, len(x.shape))), eps, lambda idx: idx[first:],
                                weight, bias, c.new_output(0))

    def rstd() -> SymTensor:
        r = c.b.declare(c.name + "_rstd", var.shape, var.dtype)
        u = loop_vars("i", len(var.shape))
        c.b.kernel(c.name + "_rstd", list(zip(u, var.shape)), r.access(lins(u)), "=",
                   f"rsqrt({var.access(lins(u))} + {eps!r})")
        return c.b.reshape(r, c.out_shape(2), c.name + "_rstd_view")

    return (out, c.b.reshape(mean, c.out_shape(1), c.name + "_mean_view"), rstd)


@lowers(aten._native_batch_norm_legit_no_training)
def batch_norm_eval_lowering(c: Ctx, x: SymTensor, weight, bias, running_mean, running_var, momentum, eps):
    def ch(idx):
        return [idx[1]]

    out = _normalized(c, x, lambda idx: running_mean.access(ch(idx)), lambda idx: running_var.access(ch(idx)),
                      eps, ch, weight, bias, c.new_output(0))
    return (out, None, None)


def _normalized(c: Ctx, x: SymTensor, mean_at, var_at, eps: float, affine_at, weight, bias,
                out: SymTensor) -> SymTensor:
    """``out = (x - mean) * rsqrt(var + eps) [* w + b]``, the statistics and the affine parameters
    read at operand position ``idx`` through ``mean_at``, ``var_at`` and ``affine_at``."""
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    expr = f"({x.access(idx)} - {mean_at(idx)}) * rsqrt({var_at(idx)} + {eps!r})"
    if weight is not None:
        expr += f" * {weight.access(affine_at(idx))}"
    if bias is not None:
        expr += f" + {bias.access(affine_at(idx))}"
    c.b.kernel(c.name, list(zip(v, x.shape)), out.access(idx), "=", expr)
    return out


def _reduce(c: Ctx, x: SymTensor, dims, keepdim: bool, update: str, scale: float | None,
            expr: ReadExpr | None = None, hint: str | None = None, out_index=None) -> SymTensor:
    """``out[kept dims] (update)= expr(x[...])`` over every element of ``x``."""
    axes = reduced_axes(len(x.shape), dims)
    out = c.new_output(out_index) if hint is None else c.b.declare(hint, kept_shape(x.shape, axes, keepdim), x.dtype)
    return reduce_into(c.b, hint or c.name, x, axes, update, out, keepdim=keepdim, expr=expr, scale=scale)


@lowers(aten.sum)
def sum_lowering(c: Ctx, x: SymTensor, dims=None, keepdim: bool = False, **_) -> SymTensor:
    return _reduce(c, x, dims, keepdim, "+=", None)


@lowers(aten.mean)
def mean_lowering(c: Ctx, x: SymTensor, dims=None, keepdim: bool = False, **_) -> SymTensor:
    red = range(len(x.shape)) if not dims else [d % len(x.shape) for d in dims]
    count = 1
    for d in red:
        count *= x.shape[d]
    return _reduce(c, x, dims, keepdim, "+=", 1.0 / count)


@lowers(aten.amax)
def amax_lowering(c: Ctx, x: SymTensor, dims=(), keepdim: bool = False) -> SymTensor:
    return _reduce(c, x, dims, keepdim, "max=", None)


@lowers(aten.amin)
def amin_lowering(c: Ctx, x: SymTensor, dims=(), keepdim: bool = False) -> SymTensor:
    return _reduce(c, x, dims, keepdim, "min=", None)


def _count(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _normalize(c: Ctx, x: SymTensor, dims, eps: float, affine_at, weight, bias, out: SymTensor):
    """(x - mean) * rsqrt(var + eps) [* w + b] over ``dims`` into ``out``; returns (out, mean, var)."""
    inv = 1.0 / _count(x.shape, dims)
    mean, keep = _row_stat(c, x, dims, c.name + "_mean", "+=", lambda r, _idx: f"{r} * {inv!r}")
    var, _ = _row_stat(c, x, dims, c.name + "_var", "+=",
                       lambda r, idx: f"({r} - {_at(mean, idx, keep)}) ** 2 * {inv!r}")
    _normalized(c, x, lambda idx: _at(mean, idx, keep), lambda idx: _at(var, idx, keep), eps, affine_at,
                weight, bias, out)
    return out, mean, var


@lowers(aten.native_group_norm)
def group_norm_lowering(c: Ctx, x: SymTensor, weight, bias, n: int, channels: int, hw: int, groups: int, eps: float):
    """Viewed as [N, G, C/G, spatial...] so each group is a set of trailing dims."""
    cg = channels // groups
    grouped = c.b.reshape(x, [x.shape[0], groups, cg, *x.shape[2:]], c.name + "_grouped")
    dims = list(range(2, len(grouped.shape)))
    inner = c.b.declare(c.name + "_grouped_out", grouped.shape, x.dtype)

    def channel(idx):
        return [idx[1].scale(cg) + idx[2]]

    out, mean, var = _normalize(c, grouped, dims, eps, channel, weight, bias, inner)
    return (c.b.reshape(out, c.out_shape(0), c.name), lambda: mean, lambda: _rstd(c, var, eps, 2))


def _rstd(c: Ctx, var: SymTensor, eps: float, i: int) -> SymTensor:
    """``1 / sqrt(var + eps)``: the saved inverse standard deviation, output ``i`` of a norm."""
    return c.elementwise(f"rsqrt({{0}} + {float(eps)!r})", var, i=i)


@lowers(aten._native_batch_norm_legit)
def batch_norm_no_stats_lowering(c: Ctx, x: SymTensor, weight, bias, *rest):
    """Normalise over every dim but the channel (training-mode batch norm, instance norm)."""
    eps = rest[-1]
    dims = [0] + list(range(2, len(x.shape)))
    out, mean, var = _normalize(c, x, dims, eps, lambda idx: [idx[1]], weight, bias, c.new_output(0))
    return (out, lambda: mean, lambda: _rstd(c, var, eps, 2))


def _variance(c: Ctx, x: SymTensor, dims, correction, keepdim: bool, out_index: int | None = None
              ) -> tuple[SymTensor, SymTensor, list[int]]:
    """(variance over ``dims`` with Bessel's ``correction``, the mean over the kept dims, the reduced axes)."""
    dims = list(range(len(x.shape))) if not dims else [d % len(x.shape) for d in dims]
    n = _count(x.shape, dims)
    inv = 1.0 / n
    mean, keep = _row_stat(c, x, dims, c.name + "_mean", "+=", lambda r, _idx: f"{r} * {inv!r}")
    denominator = n - (1 if correction is None else correction)
    scale = 1.0 / denominator if denominator > 0 else float("inf")
    var = _reduce(c, x, dims, keepdim, "+=", None, out_index=out_index,
                  expr=lambda r, idx: f"({r} - {_at(mean, idx, keep)}) ** 2 * {scale!r}")
    return var, mean, keep


@lowers(aten.var)
def var_lowering(c: Ctx, x: SymTensor, dims=None, *, correction=1, keepdim: bool = False) -> SymTensor:
    return _variance(c, x, dims, correction, keepdim)[0]


@lowers(aten.var_mean)
def var_mean_lowering(c: Ctx, x: SymTensor, dims=None, *, correction=1, keepdim: bool = False):
    """(variance, mean): the mean the variance is taken about, in the output's shape."""
    var, mean, _ = _variance(c, x, dims, correction, keepdim, out_index=0)
    return (var, lambda: c.b.reshape(mean, c.out_shape(1), c.name + "_mean_out"))


@lowers(aten.linalg_vector_norm)
def vector_norm_lowering(c: Ctx, x: SymTensor, ord=2, dims=None, keepdim: bool = False, **_) -> SymTensor:
    if ord in (float("inf"), float("-inf")):
        return _reduce(c, x, dims, keepdim, "max=" if ord > 0 else "min=", None, expr=lambda r, idx: f"abs({r})")
    if ord == 1:
        return _reduce(c, x, dims, keepdim, "+=", None, expr=lambda r, idx: f"abs({r})")
    total = _reduce(c, x, dims, keepdim, "+=", None,
                    expr=lambda r, idx: f"{r} * {r}" if ord == 2 else f"abs({r}) ** {float(ord)!r}", hint=c.name + "_pow")
    root = "sqrt({0})" if ord == 2 else f"{{0}} ** {1.0 / ord!r}"
    return c.elementwise(root, total)


@lowers(aten.prod)
def prod_lowering(c: Ctx, x: SymTensor, dim=None, keepdim: bool = False, **_) -> SymTensor:
    return _reduce(c, x, None if dim is None else [dim], keepdim, "*=", None)


def _arg_reduce(c: Ctx, x: SymTensor, dim, keepdim: bool, update: str, out_index=None) -> SymTensor:
    """First index of the max (min); ``dim`` None: of the flattened tensor."""
    if dim is None:
        x, dim = c.b.reshape(x, [_count(x.shape, range(len(x.shape)))], c.name + "_flat"), 0
    out = c.b.declare(c.name, c.out_shape(out_index), "int64")
    return arg_reduce(c.b, c.name, x, dim, update, out, keepdim=keepdim)


@lowers(aten.argmax)
def argmax_lowering(c: Ctx, x: SymTensor, dim=None, keepdim: bool = False) -> SymTensor:
    return _arg_reduce(c, x, dim, keepdim, "max=")


@lowers(aten.argmin)
def argmin_lowering(c: Ctx, x: SymTensor, dim=None, keepdim: bool = False) -> SymTensor:
    return _arg_reduce(c, x, dim, keepdim, "min=")


@lowers(aten.max.dim, aten.min.dim)
def max_dim_lowering(c: Ctx, x: SymTensor, dim: int, keepdim: bool = False):
    update = "max=" if c.node.target is aten.max.dim else "min="
    values = _reduce(c, x, [dim], keepdim, update, None, out_index=0)
    return (values, lambda: _arg_reduce(c, x, dim, keepdim, update, out_index=1))


@lowers(aten.max.default, aten.min.default)
def max_all_lowering(c: Ctx, x: SymTensor) -> SymTensor:
    """``torch.max(x)`` with no dim: the extreme of every element (a rank-0 result)."""
    return _reduce(c, x, None, False, "max=" if c.node.target is aten.max.default else "min=", None)


@lowers(aten.any, aten.all)
def any_all_lowering(c: Ctx, x: SymTensor, dims=None, keepdim: bool = False) -> SymTensor:
    """OR (AND) over ``dims`` (one dim, a list, or every dim): the ``max=`` (``min=``) of a bool."""
    op = "any" if c.node.target.overloadpacket is aten.any else "all"
    axes = reduced_axes(len(x.shape), dims)
    return reduce_canonical(c.b, c.name, x, axes, op, c.new_output(), keepdim=keepdim)


@lowers(aten._native_batch_norm_legit_functional)
def batch_norm_train_lowering(c: Ctx, x: SymTensor, weight, bias, running_mean, running_var, training: bool,
                              momentum: float, eps: float):
    """Training-mode batch norm that updates its running statistics (``F.batch_norm(…, training=True)``
    with buffers, ``nn.BatchNorm*`` in train mode): the batch normalised by its own mean and
    (biased) variance over every dim but the channel, and the new running statistics
    ``(1 - momentum)·old + momentum·batch`` (the variance unbiased, as PyTorch keeps it). The new
    statistics are the graph's in-place updates of the buffers (``torch_tracer`` IN_PLACE_UPDATES)."""
    if not training:
        return (batch_norm_eval_lowering(c, x, weight, bias, running_mean, running_var, momentum, eps)[0],
                None, None, running_mean, running_var)
    dims = [0] + list(range(2, len(x.shape)))
    out, mean, var = _normalize(c, x, dims, eps, lambda idx: [idx[1]], weight, bias, c.new_output(0))
    n = _count(x.shape, dims)
    unbiased = n / max(1, n - 1)
    stats = []
    for i, (old, batch, scale) in enumerate(((running_mean, mean, 1.0), (running_var, var, unbiased)), start=3):
        new = c.new_output(i, hint=f"{c.name}_running_{'mean' if i == 3 else 'var'}")
        v = loop_vars("i", 1)
        idx = lins(v)
        c.b.kernel(new.base, list(zip(v, new.shape)), new.access(idx), "=",
                   f"{1.0 - momentum!r} * {old.access(idx)} + {momentum * scale!r} * {batch.access(idx)}")
        stats.append(new)
    return (out, mean, _rstd(c, var, eps, 2), *stats)


@lowers(aten.dist)
def dist_lowering(c: Ctx, x: SymTensor, y: SymTensor, p=2) -> SymTensor:
    """``‖x - y‖_p`` of the broadcast difference."""
    if p == 0:
        raise LoweringGap("dist with p=0 (a count of nonzero differences)")
    shape = tuple(torch.broadcast_shapes(tuple(x.shape), tuple(y.shape)))
    diff = c.b.declare(c.name + "_diff", shape, c.out_dtype())
    v = loop_vars("i", len(shape))
    idx = lins(v)
    c.b.kernel(diff.base, list(zip(v, shape)), diff.access(idx), "=",
               f"{c.read(x, idx, shape)} - {c.read(y, idx, shape)}")
    return vector_norm_lowering(c, diff, p, None, False)


@lowers(aten.histc)
def histc_lowering(c: Ctx, x: SymTensor, bins: int = 100, min=0, max=0) -> SymTensor:  # noqa: A002 - ATen's names
    """Counts in ``bins`` equal bins over [min, max] (the data's extremes when both are 0; widened by
    one either side when they are equal): each element's bin index, then a scatter-add of ones into
    one spare bin more for the elements outside the range (and NaN), which the result leaves out."""
    bins = int(bins)
    rank = len(x.shape)
    v = loop_vars("i", rank)
    idx = lins(v)
    read = x.access(idx)
    if float(min) == 0.0 and float(max) == 0.0:
        lo = c.b.declare(c.name + "_lo", [1], "float64")
        hi = c.b.declare(c.name + "_hi", [1], "float64")
        c.b.kernel(lo.base, list(zip(v, x.shape)), lo.access([Lin.constant(0)]), "min=", read)
        c.b.kernel(hi.base, list(zip(v, x.shape)), hi.access([Lin.constant(0)]), "max=", read)
        lo_r, hi_r = lo.access([Lin.constant(0)]), hi.access([Lin.constant(0)])
        low = f"select({lo_r} == {hi_r}, {lo_r} - 1.0, {lo_r})"
        high = f"select({lo_r} == {hi_r}, {hi_r} + 1.0, {hi_r})"
    else:
        a, b = float(min), float(max)
        if a == b:
            a, b = a - 1.0, b + 1.0
        low, high = repr(a), repr(b)
    where = c.b.declare(c.name + "_bin", x.shape, "int64")
    inside = f"({read} >= {low}) and ({read} <= {high})"
    c.b.kernel(where.base, list(zip(v, x.shape)), where.access(idx), "=",
               f"select({inside}, select({read} == {high}, {bins - 1}, "
               f"min(floor(({read} - {low}) * {bins}.0 / ({high} - {low})), {bins - 1})), {bins})")
    counts = c.b.declare(c.name + "_counts", [bins + 1], c.out_dtype())
    k = loop_vars("k", 1)
    c.b.kernel(counts.base + "_zero", list(zip(k, [bins + 1])), counts.access(lins(k)), "=", "0.0")
    c.b.kernel(counts.base, list(zip(v, x.shape)), f"{counts.base}[{where.access(idx)}]", "+=", "1.0", init="keep")
    out = c.new_output()
    c.b.kernel(c.name, list(zip(k, [bins])), out.access(lins(k)), "=", counts.access(lins(k)))
    return out
