"""Matrix products: sum-of-products kernels (one MAC per iteration)."""
from __future__ import annotations

import torch

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap  # noqa: F401
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor

aten = torch.ops.aten


def _scaled(expr: str, factor) -> str:
    return expr if factor == 1 else f"{expr} * {float(factor)!r}"


def _product(c: Ctx, a: SymTensor, b: SymTensor, batch: int, accumulate_into: SymTensor | None = None,
             alpha=1) -> SymTensor:
    """``out[batch..., m, n] (+)= Σ_k a[batch..., m, k] · b[batch..., k, n]``."""
    shape = c.out_shape()
    out = accumulate_into or c.new_output()
    bv = loop_vars("b", batch)
    m, n, k = a.shape[-2], b.shape[-1], a.shape[-1]
    idx_b = lins(bv)
    a_idx = idx_b + [Lin.of("m"), Lin.of("k")]
    b_idx = idx_b + [Lin.of("k"), Lin.of("n")]
    loops = list(zip(bv, shape[:batch])) + [("m", m), ("n", n), ("k", k)]
    c.b.kernel(c.name, loops, out.access(idx_b + [Lin.of("m"), Lin.of("n")]), "+=",
               _scaled(f"{a.access(a_idx)} * {b.access(b_idx)}", alpha),
               init="keep" if accumulate_into is not None else "identity")
    return out


@lowers(aten.mm)
def mm_lowering(c: Ctx, a: SymTensor, b: SymTensor) -> SymTensor:
    return _product(c, a, b, batch=0)


@lowers(aten.bmm)
def bmm_lowering(c: Ctx, a: SymTensor, b: SymTensor) -> SymTensor:
    return _product(c, a, b, batch=1)


def _scaled_bias(c: Ctx, bias, beta) -> SymTensor:
    """The output started as ``beta·bias`` (broadcast): what the ``add*`` products accumulate into."""
    shape = c.out_shape()
    out = c.new_output()
    v = loop_vars("i", len(shape))
    c.b.kernel(c.name + "_bias", list(zip(v, shape)), out.access(lins(v)), "=",
               _scaled(c.read(bias, lins(v), shape), beta))
    return out


@lowers(aten.addmm)
def addmm_lowering(c: Ctx, bias, a: SymTensor, b: SymTensor, beta=1, alpha=1) -> SymTensor:
    return _product(c, a, b, batch=0, accumulate_into=_scaled_bias(c, bias, beta), alpha=alpha)


@lowers(aten.addmv)
def addmv_lowering(c: Ctx, bias, mat: SymTensor, vec: SymTensor, beta=1, alpha=1) -> SymTensor:
    """``beta·bias + alpha·(mat @ vec)``: one MAC per matrix element."""
    (n,) = c.out_shape()
    out = _scaled_bias(c, bias, beta)
    c.b.kernel(c.name, [("m", n), ("k", mat.shape[1])], out.access([Lin.of("m")]), "+=",
               _scaled(f"{mat.access([Lin.of('m'), Lin.of('k')])} * {vec.access([Lin.of('k')])}", alpha),
               init="keep")
    return out


@lowers(aten.addbmm)
def addbmm_lowering(c: Ctx, bias, a: SymTensor, b: SymTensor, beta=1, alpha=1) -> SymTensor:
    """``beta·bias + alpha·Σ_batch a[batch] @ b[batch]``: the batch is one more reduction."""
    shape = c.out_shape()
    out = _scaled_bias(c, bias, beta)
    loops = [("m", shape[0]), ("n", shape[1]), ("bt", a.shape[0]), ("k", a.shape[2])]
    read = f"{a.access([Lin.of('bt'), Lin.of('m'), Lin.of('k')])} * {b.access([Lin.of('bt'), Lin.of('k'), Lin.of('n')])}"
    c.b.kernel(c.name, loops, out.access([Lin.of("m"), Lin.of("n")]), "+=", _scaled(read, alpha), init="keep")
    return out


@lowers(aten._cdist_forward)
def cdist_lowering(c: Ctx, x1: SymTensor, x2: SymTensor, p: float, compute_mode=None) -> SymTensor:
    """``out[..., i, j] = ‖x1[..., i, :] − x2[..., j, :]‖_p`` (p = 0 counts the differing coordinates;
    p = ∞ takes the largest): one reduction over the coordinate, then the root."""
    shape = c.out_shape()
    lead = len(shape) - 2
    bv = loop_vars("b", lead)
    idx_b = lins(bv)
    a = x1.access(idx_b + [Lin.of("i"), Lin.of("k")])
    b = x2.access(idx_b + [Lin.of("j"), Lin.of("k")])
    diff = f"abs({a} - {b})"
    p = float(p)
    loops = list(zip(bv, shape[:lead])) + [("i", shape[-2]), ("j", shape[-1]), ("k", x1.shape[-1])]
    out_idx = idx_b + [Lin.of("i"), Lin.of("j")]
    if p == float("inf"):
        out = c.new_output()
        c.b.kernel(c.name, loops, out.access(out_idx), "max=", diff)
        return out
    total = c.b.declare(c.name + "_sum", shape, c.out_dtype())
    term = {0.0: f"select({diff} != 0.0, 1.0, 0.0)", 1.0: diff, 2.0: f"{diff} * {diff}"}.get(p, f"{diff} ** {p!r}")
    c.b.kernel(total.base, loops, total.access(out_idx), "+=", term)
    if p in (0.0, 1.0):
        return total
    return c.elementwise("sqrt({0})" if p == 2.0 else f"{{0}} ** {1.0 / p!r}", total)


@lowers(aten._trilinear)
def trilinear_lowering(c: Ctx, i1: SymTensor, i2: SymTensor, i3: SymTensor, expand1, expand2, expand3, sumdim,
                       unroll_dim: int = 1) -> SymTensor:
    """``torch.bilinear``'s core: each operand with unit dims inserted at its ``expand`` dims, their
    product summed over ``sumdim`` (one multiply-add chain per iteration)."""
    rank = len(i1.shape) + len(expand1)
    extents = [1] * rank
    maps = []
    for t, expand in ((i1, expand1), (i2, expand2), (i3, expand3)):
        own = [d for d in range(rank) if d not in set(expand)]
        for d, n in zip(own, t.shape):
            extents[d] = max(extents[d], int(n))
        maps.append((t, own))
    v = loop_vars("t", rank)
    reads = [t.access([Lin.of(v[d]) if t.shape[k] != 1 else Lin.constant(0) for k, d in enumerate(own)])
             for t, own in maps]
    kept = [d for d in range(rank) if d not in set(sumdim)]
    out = c.new_output()
    c.b.kernel(c.name, [(v[d], extents[d]) for d in range(rank)], out.access([Lin.of(v[d]) for d in kept]), "+=",
               " * ".join(reads))
    return out
