"""Convolution and pooling: sliding-window subscripts ``p*stride + r*dilation - pad``."""
from __future__ import annotations

import itertools

import torch

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor, view_dim
from solar_assets.translate.core.window import needs_pad, window_index, window_reduce
from solar_assets.translate.core.transposed_conv import emit_transposed, plan_transposed

aten = torch.ops.aten


def _expand(v, n: int) -> list[int]:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 else v


@lowers(aten.convolution)
def convolution_lowering(c: Ctx, x: SymTensor, w: SymTensor, bias, stride, padding, dilation,
                         transposed: bool, output_padding, groups: int) -> SymTensor:
    nd = len(x.shape) - 2
    if transposed:
        return _transposed_convolution(c, x, w, bias, _expand(stride, nd), _expand(padding, nd),
                                       _expand(dilation, nd), groups)
    stride, padding, dilation = _expand(stride, nd), _expand(padding, nd), _expand(dilation, nd)
    shape = c.out_shape()
    n_batch, kout, cin = x.shape[0], w.shape[0], x.shape[1]
    kg, cg = kout // groups, cin // groups
    pv, rv = loop_vars("p", nd), loop_vars("r", nd)
    if any(needs_pad(x.shape[2 + d], shape[2 + d], w.shape[2 + d], stride[d], dilation[d], padding[d])
           for d in range(nd)):
        x = c.b.padded(x, 0.0, c.name + "_in")
    out = c.new_output()
    if bias is not None:
        v = loop_vars("i", len(shape))
        c.b.kernel(c.name + "_bias", list(zip(v, shape)), out.access(lins(v)), "=",
                   c.read(bias, [lins(v)[1]], [shape[1]]))
    g_lin = [Lin.of("g", kg)] if groups > 1 else []
    kk = Lin.of("k") + (g_lin[0] if g_lin else Lin())
    cc = Lin.of("c") + (Lin.of("g", cg) if groups > 1 else Lin())
    loops = [("n", n_batch)] + ([("g", groups)] if groups > 1 else []) + [("k", kg)]
    loops += list(zip(pv, shape[2:])) + [("c", cg)] + list(zip(rv, w.shape[2:]))
    x_idx = [Lin.of("n"), cc] + [window_index(pv[d], rv[d], stride[d], dilation[d], padding[d]) for d in range(nd)]
    w_idx = [kk, Lin.of("c")] + lins(rv)
    y_idx = [Lin.of("n"), kk] + lins(pv)
    c.b.kernel(c.name, loops, out.access(y_idx), "+=", f"{x.access(x_idx)} * {w.access(w_idx)}",
               init="keep" if bias is not None else "identity")
    return out


def _pool(c: Ctx, x: SymTensor, kernel, stride, padding, dilation, update: str, pad_value: float,
          scale: float | None) -> SymTensor:
    nd = len(_expand(kernel, 1)) if isinstance(kernel, (list, tuple)) else 1
    nd = max(nd, 1)
    kernel = _expand(kernel, nd)
    stride = _expand(stride, nd) if stride else list(kernel)
    padding, dilation = _expand(padding, nd), _expand(dilation, nd)
    shape = c.out_shape(0) if isinstance(c.meta(), (tuple, list)) else c.out_shape()
    lead = len(x.shape) - nd
    if any(needs_pad(x.shape[lead + d], shape[lead + d], kernel[d], stride[d], dilation[d], padding[d])
           for d in range(nd)):
        x = c.b.padded(x, pad_value, c.name + "_in")
    out = c.b.declare(c.name, shape, x.dtype)
    return window_reduce(c.b, c.name, x, out, [1] * lead + kernel, [1] * lead + stride, [1] * lead + dilation,
                         [0] * lead + padding, update, scale)


@lowers(aten.max_pool2d_with_indices, aten.max_pool3d_with_indices)
def max_pool_lowering(c: Ctx, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    return (_pool(c, x, kernel, stride, padding, dilation, "max=", float("-inf"), None), None)


@lowers(aten.avg_pool2d, aten.avg_pool3d)
def avg_pool_lowering(c: Ctx, x, kernel, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                      divisor_override=None):
    nd = len(kernel)
    pads = _expand(padding, nd)
    if ceil_mode or (any(pads) and not count_include_pad):
        raise LoweringGap("avg_pool with ceil_mode or count_include_pad=False (window-dependent divisor)")
    count = divisor_override or int(torch.tensor(_expand(kernel, nd)).prod())
    return _pool(c, x, kernel, stride, padding, 1, "+=", 0.0, 1.0 / count)


def _transposed_convolution(c: Ctx, x: SymTensor, w: SymTensor, bias, stride, padding, dilation,
                            groups: int) -> SymTensor:
    """Written straight into the cropped output where ``transposed_conv.plan_transposed`` allows
    (one kernel per output phase, reading the input with a zero pad); otherwise the scatter form
    ``Z[n, k, i*s + r*d] += X[n, c, i] · W[c, k, r]`` into an uncropped buffer, whose window
    ``Z[..., pad : pad + O]`` is the output (a lazy slice)."""
    nd = len(x.shape) - 2
    shape = c.out_shape()
    plan = plan_transposed(x.shape[2:], w.shape[2:], stride, dilation, [-p for p in padding], shape[2:])
    if plan is None:
        return _transposed_uncropped(c, x, w, bias, stride, padding, dilation, groups)
    n_batch, cin = x.shape[0], x.shape[1]
    kg, cg = w.shape[1], cin // groups
    kk = Lin.of("k") + (Lin.of("g", kg) if groups > 1 else Lin())
    cc = Lin.of("c") + (Lin.of("g", cg) if groups > 1 else Lin())
    lead = [("n", n_batch)] + ([("g", groups)] if groups > 1 else []) + [("k", kg)]
    if plan.reads_padding():
        x = c.b.padded(x, 0.0, c.name + "_in")
    out = c.new_output()
    fill = bias is not None or not plan.covered
    if fill:
        v = loop_vars("i", len(shape))
        c.b.kernel(c.name + ("_bias" if bias is not None else "_zero"), list(zip(v, shape)), out.access(lins(v)),
                   "=", c.read(bias, [lins(v)[1]], [shape[1]]) if bias is not None else "0.0")

    def kernel(spatial, o_idx, x_idx, w_idx, init):
        outer = [lp for j, lp in enumerate(spatial) if j % 2 == 0]
        taps = [lp for j, lp in enumerate(spatial) if j % 2 == 1]
        c.b.kernel(c.name, lead + outer + [("c", cg)] + taps, out.access([Lin.of("n"), kk] + o_idx), "+=",
                   f"{x.access([Lin.of('n'), cc] + x_idx)} * {w.access([cc, Lin.of('k')] + w_idx)}", init=init)

    emit_transposed(plan, kernel, "keep" if fill else "identity")
    return out


def _transposed_uncropped(c: Ctx, x: SymTensor, w: SymTensor, bias, stride, padding, dilation,
                          groups: int) -> SymTensor:
    """Scatter form ``Z[n, k, i*s + r*d] += X[n, c, i] · W[c, k, r]`` into an uncropped buffer,
    then the output is the window ``Z[..., pad : pad + O]`` (a lazy slice)."""
    nd = len(x.shape) - 2
    shape = c.out_shape()
    n_batch, cin = x.shape[0], x.shape[1]
    kg = w.shape[1]
    cg = cin // groups
    full = [max((x.shape[2 + d] - 1) * stride[d] + (w.shape[2 + d] - 1) * dilation[d] + 1,
                padding[d] + shape[2 + d]) for d in range(nd)]
    z = c.b.declare(c.name + "_full", [n_batch, shape[1], *full], c.out_dtype())
    if bias is not None:
        v = loop_vars("i", len(z.shape))
        c.b.kernel(c.name + "_bias", list(zip(v, z.shape)), z.access(lins(v)), "=",
                   c.read(bias, [lins(v)[1]], [z.shape[1]]))
    iv, rv = loop_vars("p", nd), loop_vars("r", nd)
    kk = Lin.of("k") + (Lin.of("g", kg) if groups > 1 else Lin())
    cc = Lin.of("c") + (Lin.of("g", cg) if groups > 1 else Lin())
    loops = [("n", n_batch)] + ([("g", groups)] if groups > 1 else []) + [("k", kg)]
    loops += [("c", cg)] + list(zip(iv, x.shape[2:])) + list(zip(rv, w.shape[2:]))
    z_idx = [Lin.of("n"), kk] + [Lin.of(iv[d], stride[d]) + Lin.of(rv[d], dilation[d]) for d in range(nd)]
    c.b.kernel(c.name, loops, z.access(z_idx), "+=",
               f"{x.access([Lin.of('n'), cc] + lins(iv))} * {w.access([cc, Lin.of('k')] + lins(rv))}",
               init="keep" if bias is not None else "identity")
    old_of_new = [Lin.of(view_dim(0)), Lin.of(view_dim(1))]
    old_of_new += [Lin.constant(padding[d]) + Lin.of(view_dim(2 + d)) for d in range(nd)]
    return z.reindex(shape, old_of_new)


MAX_ADAPTIVE_WINDOWS = 256


def _adaptive(c: Ctx, x: SymTensor, out_size, update: str, average: bool) -> SymTensor:
    """Equal windows become one pooling kernel; unequal ones (PyTorch's floor/ceil windows,
    which no affine subscript can express) one small kernel per output position."""
    nd = len(out_size)
    in_size = x.shape[-nd:]
    if not any(i % o for i, o in zip(in_size, out_size)):
        kernel = [i // o for i, o in zip(in_size, out_size)]
        count = 1
        for k in kernel:
            count *= k
        return _pool(c, x, kernel, kernel, [0] * nd, [1] * nd, update, 0.0, 1.0 / count if average else None)
    positions = 1
    for o in out_size:
        positions *= o
    if positions > MAX_ADAPTIVE_WINDOWS:
        raise LoweringGap(f"adaptive pooling to {tuple(out_size)}: {positions} unequal windows")
    shape = c.out_shape(0) if isinstance(c.meta(), (tuple, list)) else c.out_shape()
    out = c.b.declare(c.name, shape, x.dtype)
    lead = len(x.shape) - nd
    lv, rv = loop_vars("i", lead), loop_vars("r", nd)
    for pos in itertools.product(*(range(o) for o in out_size)):
        starts = [(p * i) // o for p, i, o in zip(pos, in_size, out_size)]
        sizes = [-((-(p + 1) * i) // o) - s for p, i, o, s in zip(pos, in_size, out_size, starts)]
        count = 1
        for z in sizes:
            count *= z
        read = x.access(lins(lv) + [Lin.of(rv[d]) + Lin.constant(starts[d]) for d in range(nd)])
        c.b.kernel(c.name, list(zip(lv, shape[:lead])) + list(zip(rv, sizes)),
                   out.access(lins(lv) + [Lin.constant(p) for p in pos]), update,
                   f"{read} * {1.0 / count!r}" if average else read)
    return out


@lowers(aten._adaptive_avg_pool2d, aten._adaptive_avg_pool3d, aten.adaptive_avg_pool1d)
def adaptive_avg_pool_lowering(c: Ctx, x: SymTensor, out_size) -> SymTensor:
    return _adaptive(c, x, out_size, "+=", average=True)


@lowers(aten.adaptive_max_pool2d, aten.adaptive_max_pool3d)
def adaptive_max_pool_lowering(c: Ctx, x: SymTensor, out_size):
    return (_adaptive(c, x, out_size, "max=", average=False), None)
