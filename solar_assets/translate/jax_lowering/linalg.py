"""dot_general and conv_general_dilated: sum-of-products kernels (one MAC per iteration).

``dot_general`` loops over batch, lhs-free, rhs-free and contracting dims, in the output's
order (batch, lhs free, rhs free). A convolution reads its input at ``p·stride + k·rhs_dilation
- pad_lo`` with a zero pad value, and splits the feature dims by ``feature_group_count``. An
input dilation (``lhs_dilation``, a transposed convolution) writes the output directly, one kernel per
output phase (``core.transposed_conv``), where that counts exactly the real products;
elsewhere it is a scatter of real products into a buffer covering every position they reach, the
output being a window of that buffer (zero outside). No multiplication by the inserted zeros is
counted either way.
"""
from __future__ import annotations

from solar_assets.translate.jax_lowering.context import JCtx, Lin, LoweringGap
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.translate.jax_lowering.views import padded_whole
from solar_assets.translate.core.conv import ConvLayout, conv, transposed_conv


@lowers("dot_general")
def dot_general_lowering(c: JCtx, a, b, *, dimension_numbers, **_):
    (lc, rc), (lb, rb) = dimension_numbers
    a, b = c.tensor(a, c.out_dtype()), c.tensor(b, c.out_dtype())
    lf = [d for d in range(len(a.shape)) if d not in lc and d not in lb]
    rf = [d for d in range(len(b.shape)) if d not in rc and d not in rb]
    a_idx: list[Lin | None] = [None] * len(a.shape)
    b_idx: list[Lin | None] = [None] * len(b.shape)
    loops, out_idx = [], []
    for n, (da, db) in enumerate(zip(lb, rb)):
        loops.append((f"b{n}", a.shape[da]))
        a_idx[da] = b_idx[db] = Lin.of(f"b{n}")
        out_idx.append(Lin.of(f"b{n}"))
    for n, d in enumerate(lf):
        loops.append((f"m{n}", a.shape[d]))
        a_idx[d] = Lin.of(f"m{n}")
        out_idx.append(Lin.of(f"m{n}"))
    for n, d in enumerate(rf):
        loops.append((f"n{n}", b.shape[d]))
        b_idx[d] = Lin.of(f"n{n}")
        out_idx.append(Lin.of(f"n{n}"))
    for n, (da, db) in enumerate(zip(lc, rc)):
        loops.append((f"k{n}", a.shape[da]))
        a_idx[da] = b_idx[db] = Lin.of(f"k{n}")
    out = c.new_output()
    c.b.kernel(c.name, loops, out.access(out_idx), "+=", f"{a.access(a_idx)} * {b.access(b_idx)}")
    return out


@lowers("conv_general_dilated")
def conv_lowering(c: JCtx, x, w, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                  feature_group_count, batch_group_count, **_):
    """``core.conv`` with the dimension numbers as the layout. An input dilation (``lhs_dilation``)
    is a transposed convolution: product ``x[i]·w[k]`` lands at ``p = i·ld - k·rd + pad_lo``."""
    if batch_group_count != 1:
        raise LoweringGap(f"batch_group_count={batch_group_count}")
    layout = ConvLayout(*(tuple(int(d) for d in spec) for spec in dimension_numbers))
    nsp = layout.spatial
    strides, rdil = list(window_strides or [1] * nsp), list(rhs_dilation or [1] * nsp)
    ldil = list(lhs_dilation or [1] * nsp)
    pads = [(int(lo), int(hi)) for lo, hi in padding]
    groups = int(feature_group_count)
    if any(d != 1 for d in ldil):
        if any(s != 1 for s in strides):
            raise LoweringGap("a convolution with both window strides and lhs_dilation")
        return transposed_conv(c.b, c.name, x, w, c.out_shape(), c.out_dtype(), layout, ldil, [-d for d in rdil],
                               [lo for lo, _ in pads], groups, lambda t: padded_whole(c, t, 0.0, c.name + "_in"),
                               group_on_input=False)
    xp = padded_whole(c, x, 0.0, c.name + "_in") if any(lo or hi for lo, hi in pads) else x
    return conv(c.b, c.name, xp, w, c.new_output(), layout, strides, rdil, [lo for lo, _ in pads], groups)
