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

from solar_assets.translate.jax_lowering.context import JCtx, Lin, LoweringGap, SymTensor
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.translate.jax_lowering.views import padded_whole
from solar_assets.translate.core.affine import view_dim
from solar_assets.translate.core.transposed_conv import emit_transposed, plan_transposed


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
    if batch_group_count != 1:
        raise LoweringGap(f"batch_group_count={batch_group_count}")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nsp = len(lhs_spec) - 2
    strides, rdil = list(window_strides or [1] * nsp), list(rhs_dilation or [1] * nsp)
    ldil = list(lhs_dilation or [1] * nsp)
    pads = [(int(lo), int(hi)) for lo, hi in padding]
    groups = int(feature_group_count)
    out_shape = c.out_shape()
    cin_g = w.shape[rhs_spec[1]]  # input features per group
    fout_g = out_shape[out_spec[1]] // groups  # output features per group
    kernel_sizes = [w.shape[rhs_spec[2 + s]] for s in range(nsp)]
    in_sizes = [x.shape[lhs_spec[2 + s]] for s in range(nsp)]

    x_idx: list[Lin] = [Lin()] * len(x.shape)
    w_idx: list[Lin] = [Lin()] * len(w.shape)
    o_idx: list[Lin] = [Lin()] * len(out_shape)
    loops = [("n", x.shape[lhs_spec[0]])]
    x_idx[lhs_spec[0]] = o_idx[out_spec[0]] = Lin.of("n")
    if groups > 1:
        loops.append(("g", groups))
    group = Lin.of("g") if groups > 1 else Lin()
    loops.append(("f", fout_g))
    o_idx[out_spec[1]] = w_idx[rhs_spec[0]] = group.scale(fout_g) + Lin.of("f")
    loops.append(("c", cin_g))
    x_idx[lhs_spec[1]] = group.scale(cin_g) + Lin.of("c")
    w_idx[rhs_spec[1]] = Lin.of("c")
    transposed = any(d != 1 for d in ldil)
    if transposed and any(s != 1 for s in strides):
        raise LoweringGap("a convolution with both window strides and lhs_dilation")
    for s in range(nsp):
        k = f"k{s}"
        w_idx[rhs_spec[2 + s]] = Lin.of(k)
        if not transposed:
            p = f"p{s}"
            loops.append((p, out_shape[out_spec[2 + s]]))
            o_idx[out_spec[2 + s]] = Lin.of(p)
            x_idx[lhs_spec[2 + s]] = Lin.of(p, strides[s]) + Lin.of(k, rdil[s]) + Lin.constant(-pads[s][0])
        else:
            i = f"i{s}"
            loops.append((i, in_sizes[s]))
            x_idx[lhs_spec[2 + s]] = Lin.of(i)
        loops.append((k, kernel_sizes[s]))
    if not transposed:
        xp = padded_whole(c, x, 0.0, c.name + "_in") if any(lo or hi for lo, hi in pads) else x
        out = c.new_output()
        c.b.kernel(c.name, loops, out.access(o_idx), "+=", f"{xp.access(x_idx)} * {w.access(w_idx)}")
        return out
    direct = _transposed_direct(c, x, w, loops, x_idx, w_idx, o_idx, (lhs_spec, rhs_spec, out_spec), ldil, rdil,
                                pads, in_sizes, kernel_sizes)
    if direct is not None:
        return direct
    return _transposed(c, x, w, loops, x_idx, w_idx, o_idx, out_spec, ldil, rdil, pads, in_sizes, kernel_sizes)


def _transposed_direct(c: JCtx, x: SymTensor, w: SymTensor, loops, x_idx, w_idx, o_idx, specs, ldil, rdil, pads,
                       in_sizes, kernel_sizes) -> SymTensor | None:
    """The output written directly, one kernel per output phase (``transposed_conv``): position p
    takes x[i]·w[k] where ``p = i·ld - k·rd + pad_lo``. None where that form would count other
    MACs than the real products (then the buffer-and-window form below runs)."""
    lhs_spec, rhs_spec, out_spec = specs
    out_shape = c.out_shape()
    nsp = len(in_sizes)
    plan = plan_transposed(in_sizes, kernel_sizes, ldil, [-d for d in rdil], [lo for lo, _ in pads],
                           [out_shape[out_spec[2 + s]] for s in range(nsp)])
    if plan is None:
        return None
    if plan.reads_padding():
        x = padded_whole(c, x, 0.0, c.name + "_in")
    out = c.new_output()
    spatial_vars = {f"i{s}" for s in range(nsp)} | {f"k{s}" for s in range(nsp)}
    lead = [lp for lp in loops if lp[0] not in spatial_vars]
    if not plan.covered:
        v = [f"z{d}" for d in range(len(out_shape))]
        c.b.kernel(c.name + "_zero", list(zip(v, out_shape)), out.access([Lin.of(u) for u in v]), "=", "0.0")

    def kernel(spatial, o_sp, x_sp, w_sp, init):
        xi, wi, oi = list(x_idx), list(w_idx), list(o_idx)
        for s in range(nsp):
            xi[lhs_spec[2 + s]], wi[rhs_spec[2 + s]], oi[out_spec[2 + s]] = x_sp[s], w_sp[s], o_sp[s]
        outer = [lp for j, lp in enumerate(spatial) if j % 2 == 0]
        taps = [lp for j, lp in enumerate(spatial) if j % 2 == 1]
        c.b.kernel(c.name, lead[:-1] + outer + lead[-1:] + taps, out.access(oi), "+=",
                   f"{x.access(xi)} * {w.access(wi)}", init=init)

    emit_transposed(plan, kernel, "identity" if plan.covered else "keep")
    return out


def _transposed(c: JCtx, x: SymTensor, w: SymTensor, loops, x_idx, w_idx, o_idx, out_spec, ldil, rdil, pads,
                in_sizes, kernel_sizes) -> SymTensor:
    """Output position p takes x[i]·w[k] where ``p + k·rd = i·ld + pad_lo`` (the input dilated by ld,
    then padded). Products go to buffer position ``q = i·ld - k·rd + (K-1)·rd`` (≥ 0), and output
    position p is buffer position ``p + (K-1)·rd - pad_lo`` (zero where no product lands)."""
    out_shape = c.out_shape()
    nsp = len(in_sizes)
    buf_shape = list(out_shape)
    b_idx = list(o_idx)
    for s in range(nsp):
        d = out_spec[2 + s]
        buf_shape[d] = (in_sizes[s] - 1) * ldil[s] + (kernel_sizes[s] - 1) * rdil[s] + 1
        b_idx[d] = Lin.of(f"i{s}", ldil[s]) + Lin.of(f"k{s}", -rdil[s]) + Lin.constant((kernel_sizes[s] - 1) * rdil[s])
    buf = c.b.declare(c.name + "_scatter", buf_shape, c.out_dtype())
    c.b.kernel(c.name, loops, buf.access(b_idx), "+=", f"{x.access(x_idx)} * {w.access(w_idx)}")
    old_of_new = [Lin.of(view_dim(d)) for d in range(len(out_shape))]
    for s in range(nsp):
        d = out_spec[2 + s]
        old_of_new[d] = Lin.of(view_dim(d)) + Lin.constant((kernel_sizes[s] - 1) * rdil[s] - pads[s][0])
    view = buf.reindex(out_shape, old_of_new)
    return c.b.padded(view, 0.0, c.name + "_window")
