"""Convolution and pooling: sliding-window subscripts ``p*stride + r*dilation - pad``."""
from __future__ import annotations

import itertools

import torch

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.conv import ConvLayout, conv, conv_weight_grad, transposed_conv
from solar_assets.translate.core.window import needs_pad, window_reduce

aten = torch.ops.aten


def _spatial(x: SymTensor) -> range:
    """The dims a channels-first window may leave (a batch or channel broadcast stays a view)."""
    return range(2, len(x.shape))


def _expand(v, n: int) -> list[int]:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 else v


@lowers(aten.convolution)
def convolution_lowering(c: Ctx, x: SymTensor, w: SymTensor, bias, stride, padding, dilation,
                         transposed: bool, output_padding, groups: int) -> SymTensor:
    """NCHW ``core.conv``; transposed: product ``x[i]·w[r]`` at ``o = i·stride + r·dilation - padding``
    (``core.conv.transposed_conv``, the weight IOHW)."""
    nd = len(x.shape) - 2
    stride, padding, dilation = _expand(stride, nd), _expand(padding, nd), _expand(dilation, nd)
    shape = c.out_shape()
    if transposed:
        return transposed_conv(c.b, c.name, x, w, shape, c.out_dtype(), ConvLayout.channels_first(nd, True),
                               stride, dilation, [-p for p in padding], groups,
                               lambda t: c.b.padded(t, 0.0, c.name + "_in", _spatial(t)), group_on_input=True, bias=bias)
    if any(needs_pad(x.shape[2 + d], shape[2 + d], w.shape[2 + d], stride[d], dilation[d], padding[d])
           for d in range(nd)):
        x = c.b.padded(x, 0.0, c.name + "_in", _spatial(x))
    return conv(c.b, c.name, x, w, c.new_output(), ConvLayout.channels_first(nd), stride, dilation, padding,
                groups, bias)


@lowers(aten.convolution_backward)
def convolution_backward_lowering(c: Ctx, gy: SymTensor, x: SymTensor, w: SymTensor, bias_sizes, stride, padding,
                                  dilation, transposed: bool, output_padding, groups: int, output_mask):
    """A training step's convolution gradients (``solar analyze --train``), each only where
    ``output_mask`` asks for it: the input's, a transposed convolution of ``gy`` with the same
    weight (``core.conv.transposed_conv``: each real product once); the weight's, the forward's
    products summed over batch and positions (``core.conv.conv_weight_grad``); the bias's, ``gy``
    summed over all but its feature dim."""
    nd = len(x.shape) - 2
    stride, padding, dilation = _expand(stride, nd), _expand(padding, nd), _expand(dilation, nd)
    layout = ConvLayout.channels_first(nd)
    if transposed:
        return _transposed_convolution_backward(c, gy, x, w, stride, padding, dilation, groups, output_mask)

    def grad_input() -> SymTensor:
        return transposed_conv(c.b, c.name + "_input", gy, w, c.out_shape(0), c.out_dtype(0),
                               ConvLayout.channels_first(nd, True), stride, dilation, [-p for p in padding], groups,
                               lambda t: c.b.padded(t, 0.0, c.name + "_gy", _spatial(t)), group_on_input=True)

    def grad_weight() -> SymTensor:
        src = x
        if any(needs_pad(x.shape[2 + d], gy.shape[2 + d], w.shape[2 + d], stride[d], dilation[d], padding[d])
               for d in range(nd)):
            src = c.b.padded(x, 0.0, c.name + "_in", _spatial(x))
        return conv_weight_grad(c.b, c.name + "_weight", src, gy, c.new_output(1, c.name + "_weight"), layout,
                                stride, dilation, padding, groups)

    mask = list(output_mask)
    return tuple(f if wanted else None for f, wanted in zip((grad_input, grad_weight, lambda: _bias_grad(c, gy)), mask))


def _transposed_convolution_backward(c: Ctx, gy: SymTensor, x: SymTensor, w: SymTensor, stride, padding, dilation,
                                     groups: int, output_mask):
    """A transposed convolution's gradients. Its forward puts ``x[ci, p]·w[ci, co, r]`` at
    ``p·s + r·d - pad``, so the input's gradient is the ordinary convolution of ``gy`` with the same
    weight read as OIHW (``gx[ci, p] += gy[co, p·s + r·d - pad]·w[ci, co, r]``), and the weight's is
    ``conv_weight_grad`` with the roles of ``x`` and ``gy`` exchanged."""
    nd = len(x.shape) - 2
    layout = ConvLayout.channels_first(nd)

    def windowed_gy() -> SymTensor:
        if any(needs_pad(gy.shape[2 + d], x.shape[2 + d], w.shape[2 + d], stride[d], dilation[d], padding[d])
               for d in range(nd)):
            return c.b.padded(gy, 0.0, c.name + "_gy", _spatial(gy))
        return gy

    def grad_input() -> SymTensor:
        return conv(c.b, c.name + "_input", windowed_gy(), w, c.new_output(0, c.name + "_input"), layout, stride,
                    dilation, padding, groups)

    def grad_weight() -> SymTensor:
        return conv_weight_grad(c.b, c.name + "_weight", windowed_gy(), x, c.new_output(1, c.name + "_weight"),
                                layout, stride, dilation, padding, groups)

    return tuple(f if wanted else None
                 for f, wanted in zip((grad_input, grad_weight, lambda: _bias_grad(c, gy)), list(output_mask)))


def _bias_grad(c: Ctx, gy: SymTensor) -> SymTensor:
    """A convolution's bias gradient: ``gy`` summed over all but its feature dim."""
    out = c.new_output(2, c.name + "_bias")
    v = loop_vars("i", len(gy.shape))
    c.b.kernel(out.base, [(v[1], gy.shape[1]), (v[0], gy.shape[0])] + list(zip(v[2:], gy.shape[2:])),
               out.access([Lin.of(v[1])]), "+=", gy.access(lins(v)))
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
        x = c.b.padded(x, pad_value, c.name + "_in", range(lead, len(x.shape)))
    out = c.b.declare(c.name, shape, x.dtype)
    return window_reduce(c.b, c.name, x, out, [1] * lead + kernel, [1] * lead + stride, [1] * lead + dilation,
                         [0] * lead + padding, update, scale)


def _pool_indices(c: Ctx, x: SymTensor, values: SymTensor, kernel, stride, padding, dilation) -> SymTensor:
    """The second output of a max pool: per window, the flat index into the input's spatial plane
    (``h·W + w``) of its first maximum, as PyTorch scans a window row by row."""
    nd = len(kernel)
    lead = len(x.shape) - nd
    spatial = x.shape[lead:]
    src = c.b.padded(x, float("-inf"), c.name + "_in", range(lead, len(x.shape))) if any(
        needs_pad(spatial[d], values.shape[lead + d], kernel[d], stride[d], dilation[d], padding[d])
        for d in range(nd)) else x
    out = c.b.declare(c.name + "_indices", values.shape, "int64")
    p = loop_vars("p", len(values.shape))
    r = loop_vars("r", nd)
    pos = [Lin.of(p[lead + d], stride[d]) + Lin.of(r[d], dilation[d]) + Lin.constant(-padding[d]) for d in range(nd)]
    flat, plane = Lin.constant(0), 1
    for d in range(nd - 1, -1, -1):
        flat, plane = flat + pos[d].scale(plane), plane * spatial[d]
    read = src.access([*lins(p[:lead]), *pos])
    c.b.kernel(out.base, list(zip(p, values.shape)) + list(zip(r, kernel)), out.access(lins(p)), "min=",
               f"select({read} == {values.access(lins(p))}, {flat.render()}, {plane})")
    return out


@lowers(aten.max_pool2d_with_indices, aten.max_pool3d_with_indices)
def max_pool_lowering(c: Ctx, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    values = _pool(c, x, kernel, stride, padding, dilation, "max=", float("-inf"), None)
    nd = len(_expand(kernel, 1))
    kernel = _expand(kernel, nd)
    return (values, lambda: _pool_indices(c, x, values, kernel, _expand(stride, nd) if stride else list(kernel),
                                          _expand(padding, nd), _expand(dilation, nd)))


@lowers(aten.max_pool2d_with_indices_backward, aten.max_pool3d_with_indices_backward)
def max_pool_backward_lowering(c: Ctx, gy: SymTensor, x: SymTensor, kernel, stride, padding, dilation, ceil_mode,
                               indices: SymTensor) -> SymTensor:
    """A max pool's input gradient: each window's output gradient added at the position its first
    maximum came from (``indices``, flat in the input's spatial plane as ``_pool_indices`` gives it)."""
    nd = len(_expand(kernel, 1)) if isinstance(kernel, (list, tuple)) else 1
    kernel = _expand(kernel, nd)
    stride = _expand(stride, nd) if stride else list(kernel)
    padding, dilation = _expand(padding, nd), _expand(dilation, nd)
    spatial = x.shape[len(x.shape) - nd:]

    def value(p: list[str], r: list[str], pos: list[Lin]) -> str:
        lead = len(p) - nd
        flat, plane = Lin.constant(0), 1
        for d in range(nd - 1, -1, -1):
            flat, plane = flat + (pos[d] + Lin.constant(-padding[d])).scale(plane), plane * spatial[d]
        return f"select({indices.access(lins(p))} == {flat.render()}, {gy.access(lins(p))}, 0.0)"

    return _scatter_windows(c, gy, x, kernel, stride, padding, dilation, value)


@lowers(aten.avg_pool2d_backward, aten.avg_pool3d_backward)
def avg_pool_backward_lowering(c: Ctx, gy: SymTensor, x: SymTensor, kernel, stride, padding, ceil_mode,
                               count_include_pad, divisor_override) -> SymTensor:
    """An average pool's input gradient: each window's output gradient, divided as the forward
    divided it (the window size, ``divisor_override``, or where windows differ the taps each one
    counts: ``avg_pool_lowering``), added at every position of the window."""
    nd = len(_expand(kernel, 1)) if isinstance(kernel, (list, tuple)) else 1
    kernel = _expand(kernel, nd)
    stride = _expand(stride, nd) if stride else list(kernel)
    pads = _expand(padding, nd)
    if divisor_override:
        divisor = lambda p: fmt(divisor_override)  # noqa: E731
    elif not ceil_mode and not (any(pads) and not count_include_pad):
        size = 1
        for k in kernel:
            size *= k
        divisor = lambda p: fmt(size)  # noqa: E731
    else:
        taps = _window_taps(c, x, gy, kernel, stride, pads, count_include_pad)
        divisor = lambda p: taps.access(lins(p)[len(p) - nd:])  # noqa: E731
    return _scatter_windows(c, gy, x, kernel, stride, pads, [1] * nd,
                            lambda p, r, pos: f"{gy.access(lins(p))} / {divisor(p)}")


def fmt(x: float | int) -> str:
    return repr(float(x))


def _scatter_windows(c: Ctx, gy: SymTensor, x: SymTensor, kernel, stride, padding, dilation, value) -> SymTensor:
    """A pool's input gradient as a scatter-add: for every window ``p`` and tap ``r``, ``value(p, r,
    pos)`` (pos: the tap's position in the span) added at that position of a zeroed buffer spanning
    every window (the input plus its padding); the input's window of it is the gradient."""
    nd = len(kernel)
    lead = len(x.shape) - nd
    spatial = x.shape[lead:]
    out_sp = gy.shape[lead:]
    span = [max(spatial[d] + padding[d], (out_sp[d] - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1)
            + padding[d] for d in range(nd)]
    whole = all(span[d] == spatial[d] for d in range(nd))  # no padding, no window past the end
    buf = c.new_output() if whole else c.b.declare(c.name + "_span", [*x.shape[:lead], *span], c.out_dtype())
    v = loop_vars("i", len(buf.shape))
    c.b.kernel(buf.base + "_zero", list(zip(v, buf.shape)), buf.access(lins(v)), "=", "0.0")
    p, r = loop_vars("p", len(gy.shape)), loop_vars("r", nd)
    pos = [Lin.of(p[lead + d], stride[d]) + Lin.of(r[d], dilation[d]) for d in range(nd)]
    c.b.kernel(c.name, list(zip(p, gy.shape)) + list(zip(r, kernel)), buf.access([*lins(p[:lead]), *pos]), "+=",
               value(p, r, pos), init="keep")
    if whole:
        return buf
    out = c.new_output()
    w = loop_vars("i", len(x.shape))
    src = [*lins(w[:lead]), *[Lin.of(w[lead + d]) + Lin.constant(padding[d]) for d in range(nd)]]
    c.b.kernel(c.name + "_window", list(zip(w, x.shape)), out.access(lins(w)), "=", buf.access(src))
    return out


def _window_taps(c: Ctx, x: SymTensor, gy: SymTensor, kernel, stride, pads, count_include_pad) -> SymTensor:
    """Per output window (``gy``'s positions), the taps an average pool divides it by where windows
    differ: the window sum over a tensor of ones (1 where a tap counts)."""
    nd = len(kernel)
    lead = len(x.shape) - nd
    spatial = list(x.shape[lead:])
    counted = [n + 2 * p for n, p in zip(spatial, pads)] if count_include_pad else spatial
    ones = c.b.declare(c.name + "_ones", counted, x.dtype)
    v = loop_vars("i", nd)
    c.b.kernel(ones.base, list(zip(v, counted)), ones.access(lins(v)), "=", "1.0")
    shift = [0] * nd if count_include_pad else pads
    src = c.b.padded(ones, 0.0, c.name + "_ones_in")
    out_spatial = list(gy.shape[lead:])
    taps = c.b.declare(c.name + "_taps", out_spatial, x.dtype)
    p, r = loop_vars("p", nd), loop_vars("r", nd)
    reads = [Lin.of(p[d], stride[d]) + Lin.of(r[d]) + Lin.constant(-shift[d]) for d in range(nd)]
    c.b.kernel(taps.base, list(zip(p, out_spatial)) + list(zip(r, kernel)), taps.access(lins(p)), "+=",
               src.access(reads))
    return taps


@lowers(aten.avg_pool2d, aten.avg_pool3d)
def avg_pool_lowering(c: Ctx, x, kernel, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                      divisor_override=None):
    """The window sums divided by the window size, by ``divisor_override``, or, where windows differ
    (``count_include_pad=False`` with padding, ``ceil_mode``'s overhanging last window), by each
    window's own count: the same window sum over a tensor of ones (1 where a tap counts)."""
    nd = len(kernel)
    pads = _expand(padding, nd)
    kernel = _expand(kernel, nd)
    if divisor_override:
        return _pool(c, x, kernel, stride, padding, 1, "+=", 0.0, 1.0 / divisor_override)
    if not ceil_mode and not (any(pads) and not count_include_pad):
        count = int(torch.tensor(kernel).prod())
        return _pool(c, x, kernel, stride, padding, 1, "+=", 0.0, 1.0 / count)
    sums = _pool(c, x, kernel, stride, padding, 1, "+=", 0.0, None)
    lead = len(x.shape) - nd
    taps = _window_taps(c, x, sums, kernel, _expand(stride, nd) if stride else list(kernel), pads, count_include_pad)
    w = loop_vars("i", len(sums.shape))
    out = c.new_output()
    c.b.kernel(c.name + "_mean", list(zip(w, sums.shape)), out.access(lins(w)), "=",
               f"{sums.access(lins(w))} / {taps.access(lins(w)[lead:])}")
    return out


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


@lowers(aten.adaptive_max_pool2d, aten.adaptive_max_pool3d, aten.adaptive_max_pool1d)
def adaptive_max_pool_lowering(c: Ctx, x: SymTensor, out_size):
    """The maxima, and their flat indices where the windows are equal (a plain max pool)."""
    values = _adaptive(c, x, out_size, "max=", average=False)
    in_size = x.shape[-len(out_size):]
    if any(i % o for i, o in zip(in_size, out_size)):
        return (values, lambda: _adaptive_indices(c, x, values, out_size))
    kernel = [i // o for i, o in zip(in_size, out_size)]
    return (values, lambda: _pool_indices(c, x, values, kernel, kernel, [0] * len(kernel), [1] * len(kernel)))


def _adaptive_indices(c: Ctx, x: SymTensor, values: SymTensor, out_size) -> SymTensor:
    """Flat spatial indices of the first maximum of each unequal adaptive window (one small kernel
    per output position, as ``_adaptive`` takes the maxima)."""
    nd = len(out_size)
    in_size = x.shape[-nd:]
    lead = len(x.shape) - nd
    out = c.b.declare(c.name + "_indices", values.shape, "int64")
    lv, rv = loop_vars("i", lead), loop_vars("r", nd)
    plane = 1
    for n in in_size:
        plane *= n
    for pos in itertools.product(*(range(o) for o in out_size)):
        starts = [(p * i) // o for p, i, o in zip(pos, in_size, out_size)]
        sizes = [-((-(p + 1) * i) // o) - s for p, i, o, s in zip(pos, in_size, out_size, starts)]
        taps = [Lin.of(rv[d]) + Lin.constant(starts[d]) for d in range(nd)]
        flat, stride = Lin.constant(0), 1
        for d in range(nd - 1, -1, -1):
            flat, stride = flat + taps[d].scale(stride), stride * in_size[d]
        at = lins(lv) + [Lin.constant(p) for p in pos]
        c.b.kernel(out.base, list(zip(lv, values.shape[:lead])) + list(zip(rv, sizes)), out.access(at), "min=",
                   f"select({x.access(lins(lv) + taps)} == {values.access(at)}, {flat.render()}, {plane})")
    return out
