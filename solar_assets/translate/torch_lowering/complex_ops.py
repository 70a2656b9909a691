"""Complex tensors (``translate.core.complex``: real and imaginary planes) in ATen: conversions to and
from real, ``view_as_complex`` / ``view_as_real``, ``complex``, ``polar``, conjugation, elementwise
arithmetic, and the FFTs as library steps (``ir.linalg``: ``fft_r2c``, ``fft_c2c``, ``fft_c2r``,
5·N·log₂N real FLOPs per complex transform of N points)."""
from __future__ import annotations

import torch

from solar_assets.translate.core.affine import Lin, SymTensor, view_dim
from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.core.complex import (
    COMPLEX_DIV, COMPLEX_MUL, ComplexPair, complex_aware, pair, parts, plane, plane_dtype, plane_of,
)
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers

aten = torch.ops.aten

COMPLEX_LOWERINGS: dict = {}
"""ATen packet → its lowering for complex operands (the real lowering of the same op is separate)."""


def for_complex(*packets):
    def register(fn):
        for p in packets:
            COMPLEX_LOWERINGS[p] = complex_aware(fn)
        return fn
    return register


def to_complex_or_real(c: Ctx, x) -> SymTensor | ComplexPair:
    """``_to_copy`` where complex is involved: a real tensor gets a zero imaginary plane; a complex one
    keeps its planes (in the new component dtype), or to a real dtype its real part (as PyTorch)."""
    target = plane_dtype(c.meta().dtype)
    if isinstance(x, ComplexPair):
        if target is None:
            return plane(c, "{0}", x.re)
        return pair(c, "{0}", "{1}", x.re, x.im)
    return pair(c, "{0}", "0.0", x)


@lowers(aten.view_as_complex)
@complex_aware
def view_as_complex_lowering(c: Ctx, x: SymTensor) -> ComplexPair:
    """The last dim of size 2 as the two planes: views, no data moves."""
    rank = len(x.shape) - 1
    shape = tuple(x.shape[:-1])

    def part(k: int) -> SymTensor:
        return x.reindex(shape, [*(Lin.of(view_dim(d)) for d in range(rank)), Lin.constant(k)])
    return ComplexPair(part(0), part(1))


@lowers(aten.view_as_real)
@complex_aware
def view_as_real_lowering(c: Ctx, z: ComplexPair) -> SymTensor:
    out = c.new_output()
    rank = len(z.shape)
    v = loop_vars("i", rank)
    for k, part in enumerate((z.re, z.im)):
        c.b.kernel(f"{c.name}_{'re' if k == 0 else 'im'}", list(zip(v, z.shape)),
                   out.access([*lins(v), Lin.constant(k)]), "=", part.access(lins(v)))
    return out


@lowers(aten.complex)
def complex_lowering(c: Ctx, re, im) -> ComplexPair:
    return pair(c, "{0}", "{1}", re, im)


@lowers(aten.polar)
def polar_lowering(c: Ctx, magnitude, angle) -> ComplexPair:
    return pair(c, "{0} * cos({1})", "{0} * sin({1})", magnitude, angle)


@for_complex(aten._conj, aten.conj_physical, aten._conj_physical, aten.conj, aten.resolve_conj)
def conj_complex(c: Ctx, z: ComplexPair) -> ComplexPair:
    return pair(c, "{0}", "-{1}", z.re, z.im)


def _planewise(packet):
    """Data movement on a complex tensor: the real lowering of the op on each plane."""
    def lowering(c: Ctx, *args, **kwargs):
        from solar_assets.translate.torch_lowering.registry import find_lowering

        real = find_lowering(c.node.target)
        planes = [real(c, *plane_of(list(args), k), **plane_of(kwargs, k)) for k in (0, 1)]
        if isinstance(planes[0], (list, tuple)):
            return type(planes[0])(ComplexPair(r, i) if r is not None else None for r, i in zip(*planes))
        return ComplexPair(*planes)
    return lowering


PLANEWISE = (aten.slice, aten.select, aten.permute, aten.view, aten._unsafe_view, aten.reshape, aten.unsqueeze,
             aten.squeeze, aten.expand, aten.transpose, aten.t, aten.constant_pad_nd, aten.flip, aten.clone,
             aten.alias, aten.detach, aten.cat, aten.split, aten.split_with_sizes, aten.repeat, aten.roll,
             aten.index_select, aten.resolve_neg, aten.slice_scatter, aten.select_scatter)
for _packet in PLANEWISE:
    COMPLEX_LOWERINGS[_packet] = complex_aware(_planewise(_packet))


@for_complex(aten.add, aten.sub)
def add_complex(c: Ctx, x, y, alpha=1) -> ComplexPair:
    sign = "+" if c.node.target.overloadpacket is aten.add else "-"
    (a, b), (p, q) = parts(x), parts(y)
    return pair(c, f"{{0}} {sign} {{2}} * {float(alpha)!r}", f"{{1}} {sign} {{3}} * {float(alpha)!r}", a, b, p, q)


@for_complex(aten.mul)
def mul_complex(c: Ctx, x, y) -> ComplexPair:
    (a, b), (p, q) = parts(x), parts(y)
    return pair(c, *COMPLEX_MUL, a, b, p, q)


@for_complex(aten.div)
def div_complex(c: Ctx, x, y, rounding_mode=None) -> ComplexPair:
    if rounding_mode is not None:
        raise LoweringGap("complex division with a rounding mode")
    (a, b), (p, q) = parts(x), parts(y)
    return pair(c, *COMPLEX_DIV, a, b, p, q)


@for_complex(aten.neg)
def neg_complex(c: Ctx, z: ComplexPair) -> ComplexPair:
    return pair(c, "-{0}", "-{1}", z.re, z.im)


@for_complex(aten.abs)
def abs_complex(c: Ctx, z: ComplexPair) -> SymTensor:
    return plane(c, "hypot({0}, {1})", z.re, z.im)


@for_complex(aten.angle)
def angle_complex(c: Ctx, z: ComplexPair) -> SymTensor:
    return plane(c, "atan2({1}, {0})", z.re, z.im)


@for_complex(aten.real)
def real_complex(c: Ctx, z: ComplexPair) -> SymTensor:
    return z.re


@for_complex(aten.imag)
def imag_complex(c: Ctx, z: ComplexPair) -> SymTensor:
    return z.im


def _dims(x, dim) -> tuple[int, ...]:
    rank = len(x.shape)
    return tuple(int(d) % rank for d in dim)


@lowers(aten._fft_r2c)
def fft_r2c_lowering(c: Ctx, x: SymTensor, dim, normalization: int, onesided: bool) -> ComplexPair:
    re, im = c.b.linalg(c.name, "fft_r2c", [x], {"dims": _dims(x, dim), "normalization": int(normalization),
                                                  "onesided": bool(onesided)})
    return ComplexPair(re, im)


@lowers(aten._fft_c2c)
@complex_aware
def fft_c2c_lowering(c: Ctx, z, dim, normalization: int, forward: bool) -> ComplexPair:
    if not isinstance(z, ComplexPair):
        raise LoweringGap("a c2c FFT of a real tensor")
    re, im = c.b.linalg(c.name, "fft_c2c", [z.re, z.im], {"dims": _dims(z, dim), "normalization": int(normalization),
                                                          "forward": bool(forward)})
    return ComplexPair(re, im)


@lowers(aten._fft_c2r)
@complex_aware
def fft_c2r_lowering(c: Ctx, z, dim, normalization: int, last_dim_size: int) -> SymTensor:
    if not isinstance(z, ComplexPair):
        raise LoweringGap("a c2r FFT of a real tensor")
    return c.b.linalg(c.name, "fft_c2r", [z.re, z.im], {"dims": _dims(z, dim), "normalization": int(normalization),
                                                        "last_dim_size": int(last_dim_size)})[0]
