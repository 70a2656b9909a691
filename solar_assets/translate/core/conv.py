"""Convolution and transposed convolution, for both frontends; the layout is a parameter.

A ``ConvLayout`` says where the batch, feature and spatial dims sit in the input, the weight
and the output: PyTorch's NCHW is ``ConvLayout.channels_first``, JAX passes its dimension
numbers. A convolution is one sum-of-products kernel (one MAC per real product) over
``n, g, k, p..., c, r...``, reading the input at ``p·stride + r·dilation - pad`` (the caller
gives it with a zero pad value where a window leaves it). A transposed convolution puts product
``x[i]·w[r]`` at output position ``o = i·s + r·d + off``; it is written straight into the output,
one kernel per output phase (``core.transposed_conv``), where that counts exactly the real
products, and otherwise scattered into a buffer covering every position a product reaches, the
output being a window of it. No multiplication by an inserted zero is counted either way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from solar_assets.translate.core.affine import Lin, SymTensor, view_dim
from solar_assets.translate.core.builder import ProgramBuilder, lins, loop_vars
from solar_assets.translate.core.transposed_conv import emit_transposed, plan_transposed
from solar_assets.translate.core.window import window_index

PadSource = Callable[[SymTensor], SymTensor]  # the input with a zero pad value (frontend's policy)


@dataclass(frozen=True)
class ConvLayout:
    """Dim positions: ``lhs`` = input (batch, feature, spatial...), ``rhs`` = weight (output feature,
    input feature, spatial...), ``out`` = output (batch, feature, spatial...)."""

    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    out: tuple[int, ...]

    @staticmethod
    def channels_first(spatial: int, weight_in_first: bool = False) -> "ConvLayout":
        """NCHW input and output; an OIHW weight (IOHW with ``weight_in_first``: PyTorch's
        transposed convolution)."""
        dims = tuple(range(spatial + 2))
        rhs = (1, 0, *dims[2:]) if weight_in_first else dims
        return ConvLayout(dims, rhs, dims)

    @property
    def spatial(self) -> int:
        return len(self.lhs) - 2


@dataclass
class _Subscripts:
    """The three subscripts of a conv kernel, filled dim by dim through the layout."""

    x: list[Lin]
    w: list[Lin]
    o: list[Lin]


def _features(layout: ConvLayout, x: SymTensor, w: SymTensor, out: SymTensor, groups: int,
              group_on_input: bool) -> tuple[list[tuple[str, int]], _Subscripts, int]:
    """Loops ``n, (g), k`` and the batch / feature subscripts; returns them and the per-group
    input feature count (the ``c`` loop's extent). ``group_on_input``: the weight's input-feature
    dim carries the group offset (PyTorch's transposed weight), else its output-feature dim."""
    cin_g = x.shape[layout.lhs[1]] // groups
    fout_g = out.shape[layout.out[1]] // groups
    subs = _Subscripts([Lin()] * len(x.shape), [Lin()] * len(w.shape), [Lin()] * len(out.shape))
    loops = [("n", x.shape[layout.lhs[0]])] + ([("g", groups)] if groups > 1 else []) + [("k", fout_g)]
    group = Lin.of("g") if groups > 1 else Lin()
    subs.x[layout.lhs[0]] = subs.o[layout.out[0]] = Lin.of("n")
    subs.o[layout.out[1]] = group.scale(fout_g) + Lin.of("k")
    subs.x[layout.lhs[1]] = group.scale(cin_g) + Lin.of("c")
    subs.w[layout.rhs[0]] = Lin.of("k") if group_on_input else group.scale(fout_g) + Lin.of("k")
    subs.w[layout.rhs[1]] = group.scale(cin_g) + Lin.of("c") if group_on_input else Lin.of("c")
    return loops, subs, cin_g


def fill_bias(b: ProgramBuilder, hint: str, out: SymTensor, feature_dim: int, bias: SymTensor | None) -> None:
    """``out[...] = bias[feature]`` (0 without a bias): the start an ``init='keep'`` kernel adds to."""
    v = loop_vars("i", len(out.shape))
    idx = lins(v)
    value = b.broadcast_access(bias, [idx[feature_dim]], [out.shape[feature_dim]]) if bias is not None else "0.0"
    b.kernel(hint + ("_bias" if bias is not None else "_zero"), list(zip(v, out.shape)), out.access(idx), "=", value)


def conv(b: ProgramBuilder, hint: str, x: SymTensor, w: SymTensor, out: SymTensor, layout: ConvLayout,
         strides: Sequence[int], dilation: Sequence[int], pads_lo: Sequence[int], groups: int,
         bias: SymTensor | None = None) -> SymTensor:
    """``out[n, k, p] += x[n, c, p·s + r·d - pad] · w[k, c, r]`` (per group), after the bias."""
    loops, subs, cin_g = _features(layout, x, w, out, groups, group_on_input=False)
    pv, rv = loop_vars("p", layout.spatial), loop_vars("r", layout.spatial)
    for s in range(layout.spatial):
        subs.o[layout.out[2 + s]] = Lin.of(pv[s])
        subs.w[layout.rhs[2 + s]] = Lin.of(rv[s])
        subs.x[layout.lhs[2 + s]] = window_index(pv[s], rv[s], int(strides[s]), int(dilation[s]), int(pads_lo[s]))
    loops += [(pv[s], out.shape[layout.out[2 + s]]) for s in range(layout.spatial)] + [("c", cin_g)]
    loops += [(rv[s], w.shape[layout.rhs[2 + s]]) for s in range(layout.spatial)]
    if bias is not None:
        fill_bias(b, hint, out, layout.out[1], bias)
    b.kernel(hint, loops, out.access(subs.o), "+=", f"{x.access(subs.x)} * {w.access(subs.w)}",
             init="keep" if bias is not None else "identity")
    return out


def conv_weight_grad(b: ProgramBuilder, hint: str, x: SymTensor, gy: SymTensor, gw: SymTensor, layout: ConvLayout,
                     strides: Sequence[int], dilation: Sequence[int], pads_lo: Sequence[int], groups: int) -> SymTensor:
    """A convolution's weight gradient: ``gw[k, c, r] += gy[n, k, p] · x[n, c, p·s + r·d - pad]`` (per
    group), the same real products as the forward convolution (one MAC each), summed over the batch
    and the output positions instead of the input features and taps (``x`` with a zero pad value
    where a window leaves it)."""
    cin_g = x.shape[layout.lhs[1]] // groups
    kout_g = gy.shape[layout.out[1]] // groups
    group = Lin.of("g") if groups > 1 else Lin()
    xi, gi, wi = [Lin()] * len(x.shape), [Lin()] * len(gy.shape), [Lin()] * len(gw.shape)
    xi[layout.lhs[0]] = gi[layout.out[0]] = Lin.of("n")
    gi[layout.out[1]] = group.scale(kout_g) + Lin.of("k")
    wi[layout.rhs[0]] = group.scale(kout_g) + Lin.of("k")
    xi[layout.lhs[1]] = group.scale(cin_g) + Lin.of("c")
    wi[layout.rhs[1]] = Lin.of("c")
    pv, rv = loop_vars("p", layout.spatial), loop_vars("r", layout.spatial)
    for s in range(layout.spatial):
        gi[layout.out[2 + s]] = Lin.of(pv[s])
        wi[layout.rhs[2 + s]] = Lin.of(rv[s])
        xi[layout.lhs[2 + s]] = window_index(pv[s], rv[s], int(strides[s]), int(dilation[s]), int(pads_lo[s]))
    loops = ([("g", groups)] if groups > 1 else []) + [("k", kout_g), ("c", cin_g)]
    loops += [(rv[s], gw.shape[layout.rhs[2 + s]]) for s in range(layout.spatial)]
    loops += [("n", x.shape[layout.lhs[0]])] + [(pv[s], gy.shape[layout.out[2 + s]]) for s in range(layout.spatial)]
    b.kernel(hint, loops, gw.access(wi), "+=", f"{gy.access(gi)} * {x.access(xi)}")
    return gw


def transposed_conv(b: ProgramBuilder, hint: str, x: SymTensor, w: SymTensor, out_shape: Sequence[int],
                    out_dtype: str, layout: ConvLayout, s: Sequence[int], d: Sequence[int], off: Sequence[int],
                    groups: int, pad_source: PadSource, *, group_on_input: bool,
                    bias: SymTensor | None = None) -> SymTensor:
    """Product ``x[i]·w[r]`` lands at ``o = i·s + r·d + off`` (per spatial dim; see module doc)."""
    nsp = layout.spatial
    in_sp = [x.shape[layout.lhs[2 + j]] for j in range(nsp)]
    k_sp = [w.shape[layout.rhs[2 + j]] for j in range(nsp)]
    o_sp = [out_shape[layout.out[2 + j]] for j in range(nsp)]
    plan = plan_transposed(in_sp, k_sp, s, d, off, o_sp)
    if plan is None:
        return _scattered(b, hint, x, w, out_shape, out_dtype, layout, s, d, off, groups, group_on_input, bias)
    if plan.reads_padding():
        x = pad_source(x)
    out = b.declare(hint, out_shape, out_dtype)
    fill = bias is not None or not plan.covered
    if fill:
        fill_bias(b, hint, out, layout.out[1], bias)
    loops, subs, cin_g = _features(layout, x, w, out, groups, group_on_input)

    def kernel(spatial, o_sp_idx, x_sp_idx, w_sp_idx, init):
        xi, wi, oi = list(subs.x), list(subs.w), list(subs.o)
        for j in range(nsp):
            xi[layout.lhs[2 + j]], wi[layout.rhs[2 + j]], oi[layout.out[2 + j]] = x_sp_idx[j], w_sp_idx[j], o_sp_idx[j]
        outer = [lp for n, lp in enumerate(spatial) if n % 2 == 0]
        taps = [lp for n, lp in enumerate(spatial) if n % 2 == 1]
        b.kernel(hint, loops + outer + [("c", cin_g)] + taps, out.access(oi), "+=",
                 f"{x.access(xi)} * {w.access(wi)}", init=init)

    emit_transposed(plan, kernel, "keep" if fill else "identity")
    return out


def _scattered(b: ProgramBuilder, hint: str, x: SymTensor, w: SymTensor, out_shape: Sequence[int], out_dtype: str,
               layout: ConvLayout, s: Sequence[int], d: Sequence[int], off: Sequence[int], groups: int,
               group_on_input: bool, bias: SymTensor | None) -> SymTensor:
    """Products scattered into a buffer spanning every position they reach and the whole output
    (buffer position ``q = o - lo``); the output is the window ``q = o - lo`` for ``o`` in range."""
    nsp = layout.spatial
    buf_shape, lows = list(out_shape), []
    for j in range(nsp):
        n_in, k, n_out = x.shape[layout.lhs[2 + j]], w.shape[layout.rhs[2 + j]], out_shape[layout.out[2 + j]]
        lo = min(0, off[j] + min(0, (k - 1) * d[j]))
        hi = max(n_out - 1, off[j] + (n_in - 1) * s[j] + max(0, (k - 1) * d[j]))
        buf_shape[layout.out[2 + j]] = hi - lo + 1
        lows.append(lo)
    z = b.declare(hint + "_full", buf_shape, out_dtype)
    if bias is not None:
        fill_bias(b, hint, z, layout.out[1], bias)
    loops, subs, cin_g = _features(layout, x, w, z, groups, group_on_input)
    iv, rv = loop_vars("p", nsp), loop_vars("r", nsp)
    for j in range(nsp):
        subs.x[layout.lhs[2 + j]] = Lin.of(iv[j])
        subs.w[layout.rhs[2 + j]] = Lin.of(rv[j])
        subs.o[layout.out[2 + j]] = Lin.of(iv[j], s[j]) + Lin.of(rv[j], d[j]) + Lin.constant(off[j] - lows[j])
    loops += [("c", cin_g)] + [(iv[j], x.shape[layout.lhs[2 + j]]) for j in range(nsp)]
    loops += [(rv[j], w.shape[layout.rhs[2 + j]]) for j in range(nsp)]
    b.kernel(hint, loops, z.access(subs.o), "+=", f"{x.access(subs.x)} * {w.access(subs.w)}",
             init="keep" if bias is not None else "identity")
    old_of_new = [Lin.of(view_dim(n)) for n in range(len(out_shape))]
    for j in range(nsp):
        old_of_new[layout.out[2 + j]] = Lin.of(view_dim(layout.out[2 + j])) + Lin.constant(-lows[j])
    return z.reindex(out_shape, old_of_new)
