"""Complex arrays (``translate.core.complex``: real and imaginary planes) in jaxprs: ``complex``,
``conj``, ``real`` / ``imag``, elementwise arithmetic, and ``fft`` as library steps (``ir.linalg``)."""
from __future__ import annotations

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.core.complex import ComplexPair, complex_aware
from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap, SymTensor
from solar_assets.translate.jax_lowering.registry import lowers

FFT, IFFT, RFFT, IRFFT = 0, 1, 2, 3  # jax.lax.FftType


def _plane(c: JCtx, template: str, *operands, hint: str) -> SymTensor:
    shape = c.out_shape()
    out = c.b.declare(c.name + hint, shape, c.out_dtype())
    v = loop_vars("i", len(shape))
    idx = lins(v)
    c.b.kernel(out.base, list(zip(v, shape)), out.access(idx), "=",
               template.format(*(c.read(x, idx, shape) for x in operands)))
    return out


def _pair(c: JCtx, re_template: str, im_template: str, *operands) -> ComplexPair:
    return ComplexPair(_plane(c, re_template, *operands, hint="_re"), _plane(c, im_template, *operands, hint="_im"))


def _parts(x) -> tuple:
    return (x.re, x.im) if isinstance(x, ComplexPair) else (x, 0.0)


@lowers("complex")
def complex_lowering(c: JCtx, x, y):
    return _pair(c, "{0}", "{1}", x, y)


@lowers("conj")
@complex_aware
def conj_lowering(c: JCtx, x, **_):
    """A real operand becomes complex with a zero imaginary plane (as ``lax.conj`` returns)."""
    re, im = _parts(x)
    return _pair(c, "{0}", "-{1}", re, im)


@lowers("real")
@complex_aware
def real_lowering(c: JCtx, z):
    return _parts(z)[0]


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
