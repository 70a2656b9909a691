"""Complex arrays (``translate.core.complex``: real and imaginary planes) in jaxprs: ``complex``,
``conj``, ``real`` / ``imag``, elementwise arithmetic, and ``fft`` as library steps (``ir.linalg``)."""
from __future__ import annotations

from solar_assets.translate.core.complex import (
    COMPLEX_DIV, COMPLEX_MUL, ComplexPair, complex_aware, pair, parts, plane, plane_of,
)
from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap
from solar_assets.translate.jax_lowering.registry import lowers

FFT, IFFT, RFFT, IRFFT = 0, 1, 2, 3  # jax.lax.FftType

COMPLEX_LOWERINGS: dict = {}
"""Primitive → its lowering for complex operands (the real lowering of the same primitive is separate)."""


def for_complex(*names):
    def register(fn):
        for n in names:
            COMPLEX_LOWERINGS[n] = complex_aware(fn)
        return fn
    return register


@lowers("complex")
def complex_lowering(c: JCtx, x, y):
    return pair(c, "{0}", "{1}", x, y)


@lowers("conj")
@complex_aware
def conj_lowering(c: JCtx, x, **_):
    """A real operand becomes complex with a zero imaginary plane (as ``lax.conj`` returns)."""
    re, im = parts(x)
    return pair(c, "{0}", "-{1}", re, im)


@lowers("real")
@complex_aware
def real_lowering(c: JCtx, z):
    return parts(z)[0]


@lowers("imag")
@complex_aware
def imag_lowering(c: JCtx, z):
    if not isinstance(z, ComplexPair):
        return c.elementwise("0.0 * {0}", z)
    return z.im


@lowers("fft")
@complex_aware
def fft_lowering(c: JCtx, x, *, fft_type, fft_lengths):
    """Over the last ``len(fft_lengths)`` axes; the inverse transforms scale by 1/n (XLA's)."""
    kind = int(getattr(fft_type, "value", fft_type))
    rank = len(c.aval(0).shape) if kind != IRFFT else len(c.out_shape())
    dims = tuple(range(rank - len(fft_lengths), rank))
    if 0 in c.out_shape():
        raise LoweringGap("an FFT of an empty array")
    if kind == RFFT:
        if isinstance(x, ComplexPair):
            raise LoweringGap("an RFFT of a complex operand")
        return ComplexPair(*c.b.linalg(c.name, "fft_r2c", [x], {"dims": dims, "onesided": True}))
    z = x if isinstance(x, ComplexPair) else ComplexPair(x, c.elementwise("0.0 * {0}", x))
    if kind in (FFT, IFFT):
        return ComplexPair(*c.b.linalg(c.name, "fft_c2c", [z.re, z.im], {
            "dims": dims, "forward": kind == FFT, "normalization": 0 if kind == FFT else 2}))
    return c.b.linalg(c.name, "fft_c2r", [z.re, z.im], {"dims": dims, "normalization": 2,
                                                        "last_dim_size": int(fft_lengths[-1])})[0]


@for_complex("add", "add_any", "sub")
def add_complex(c: JCtx, x, y, **_):
    sign = "-" if c.eqn.primitive.name == "sub" else "+"
    (a, b), (p, q) = parts(x), parts(y)
    return pair(c, f"{{0}} {sign} {{2}}", f"{{1}} {sign} {{3}}", a, b, p, q)


@for_complex("mul")
def mul_complex(c: JCtx, x, y, **_):
    (a, b), (p, q) = parts(x), parts(y)
    return pair(c, *COMPLEX_MUL, a, b, p, q)


@for_complex("div")
def div_complex(c: JCtx, x, y, **_):
    (a, b), (p, q) = parts(x), parts(y)
    return pair(c, *COMPLEX_DIV, a, b, p, q)


@for_complex("neg")
def neg_complex(c: JCtx, z, **_):
    return pair(c, "-{0}", "-{1}", *parts(z))


@for_complex("abs")
def abs_complex(c: JCtx, z, **_):
    return plane(c, "hypot({0}, {1})", *parts(z))


def _planewise(name: str):
    """Data movement on a complex array: the real lowering on each plane."""
    def lowering(c: JCtx, *args, **params):
        from solar_assets.translate.jax_lowering.registry import find_lowering

        real = find_lowering(name)
        planes = [real(c, *plane_of(list(args), k), **params) for k in (0, 1)]
        if isinstance(planes[0], (list, tuple)):
            return type(planes[0])(ComplexPair(r, i) for r, i in zip(*planes))
        return ComplexPair(*planes)
    return lowering


for _name in ("broadcast_in_dim", "reshape", "squeeze", "transpose", "rev", "slice", "concatenate", "pad",
              "copy", "copy_p", "convert_element_type", "dynamic_slice", "expand_dims", "select_n"):
    COMPLEX_LOWERINGS[_name] = complex_aware(_planewise(_name))
