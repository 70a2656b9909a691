"""Pointwise ATen ops: aliases of the canonical elementwise ops (``core.elementwise``), one '='
kernel each, broadcasting by numpy rules; the ops with ATen-specific arguments below."""
from __future__ import annotations

import math

import torch

from solar_assets.translate.core.elementwise import ARITY, ELEMENTWISE
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers

aten = torch.ops.aten

# ATen op -> canonical elementwise op (``core.elementwise``)
ALIASES = {
    aten.relu: "relu", aten.exp: "exp", aten.exp2: "exp2", aten.log: "log", aten.log1p: "log1p",
    aten.expm1: "expm1", aten.tanh: "tanh", aten.sigmoid: "sigmoid", aten.sqrt: "sqrt", aten.rsqrt: "rsqrt",
    aten.abs: "abs", aten.neg: "neg", aten.erf: "erf", aten.erfc: "erfc", aten.reciprocal: "reciprocal",
    aten.sin: "sin", aten.cos: "cos", aten.tan: "tan", aten.sinh: "sinh", aten.cosh: "cosh", aten.asinh: "asinh",
    aten.acosh: "acosh", aten.atanh: "atanh", aten.sign: "sign", aten.silu: "silu", aten.floor: "floor",
    aten.ceil: "ceil", aten.trunc: "trunc", aten.square: "square", aten.isnan: "isnan", aten.isfinite: "is_finite",
    aten.logical_not: "not", aten.bitwise_not: "not",
    aten.mul: "mul", aten.maximum: "max", aten.minimum: "min", aten.pow: "pow",
    aten.eq: "eq", aten.ne: "ne", aten.lt: "lt", aten.le: "le", aten.gt: "gt", aten.ge: "ge",
    aten.logical_and: "and", aten.logical_or: "or", aten.logical_xor: "xor",
    aten.bitwise_and: "and", aten.bitwise_or: "or", aten.bitwise_xor: "xor",
    aten.fmod: "fmod", aten.remainder: "remainder", aten.floor_divide: "floor_div", aten.where: "select",
    aten.asin: "asin", aten.acos: "acos", aten.atan: "atan", aten.log2: "log2", aten.log10: "log10",
    aten.atan2: "atan2", aten.hypot: "hypot", aten.copysign: "copysign", aten.fmax: "fmax", aten.fmin: "fmin",
    aten.ldexp: "ldexp", aten.isinf: "isinf", aten.signbit: "signbit", aten.angle: "angle",
    aten.lgamma: "lgamma", aten.digamma: "digamma", aten.erfinv: "erfinv", aten.i0: "bessel_i0",
    aten.special_i0e: "bessel_i0e", aten.special_i1: "bessel_i1", aten.special_i1e: "bessel_i1e",
    aten.special_ndtri: "ndtri", aten.special_erfcx: "erfcx", aten.special_log_ndtr: "log_ndtr",
    aten.special_bessel_j0: "bessel_j0", aten.special_bessel_j1: "bessel_j1", aten.special_bessel_y0: "bessel_y0",
    aten.special_bessel_y1: "bessel_y1", aten.special_modified_bessel_i0: "bessel_i0",
    aten.special_modified_bessel_i1: "bessel_i1", aten.special_modified_bessel_k0: "bessel_k0",
    aten.special_modified_bessel_k1: "bessel_k1", aten.special_scaled_modified_bessel_k0: "bessel_k0e",
    aten.special_scaled_modified_bessel_k1: "bessel_k1e", aten.special_spherical_bessel_j0: "spherical_bessel_j0",
    aten.igamma: "igamma", aten.igammac: "igammac", aten.special_zeta: "zeta",
    aten.special_chebyshev_polynomial_t: "chebyshev_t", aten.special_chebyshev_polynomial_u: "chebyshev_u",
    aten.special_chebyshev_polynomial_v: "chebyshev_v", aten.special_chebyshev_polynomial_w: "chebyshev_w",
    aten.special_shifted_chebyshev_polynomial_t: "shifted_chebyshev_t",
    aten.special_shifted_chebyshev_polynomial_u: "shifted_chebyshev_u",
    aten.special_shifted_chebyshev_polynomial_v: "shifted_chebyshev_v",
    aten.special_shifted_chebyshev_polynomial_w: "shifted_chebyshev_w",
    aten.special_hermite_polynomial_h: "hermite_h", aten.special_hermite_polynomial_he: "hermite_he",
    aten.special_laguerre_polynomial_l: "laguerre_l", aten.special_legendre_polynomial_p: "legendre_p",
}
ROUNDING = {None: "div", "trunc": "int_div", "floor": "floor_div"}  # aten.div's rounding_mode
BITWISE = {aten.bitwise_not, aten.bitwise_and, aten.bitwise_or, aten.bitwise_xor}


def _canonical(name: str, bitwise: bool):
    template = ELEMENTWISE[name]

    def lowering(c: Ctx, *args, **kwargs):
        if bitwise and c.out_dtype() != "bool":
            raise LoweringGap(f"bitwise {name} on {c.out_dtype()} (only bool operands are supported)")
        return c.elementwise(template, *args[:ARITY[name]])
    return lowering


for _op, _name in ALIASES.items():
    lowers(_op)(_canonical(_name, _op in BITWISE))


@lowers(aten.div)
def div_lowering(c: Ctx, x, y, rounding_mode: str | None = None):
    if rounding_mode not in ROUNDING:
        raise LoweringGap(f"div with rounding_mode={rounding_mode!r}")
    return c.elementwise(ELEMENTWISE[ROUNDING[rounding_mode]], x, y)


@lowers(aten.round)
def round_lowering(c: Ctx, x, **kwargs):
    """torch.round: half to even; with ``decimals`` d, of x·10^d, then divided back (as ATen does;
    for negative d by 10^-d, then multiplied)."""
    d = int(kwargs.get("decimals") or 0)
    if not d:
        return c.elementwise(ELEMENTWISE["round_half_even"], x)
    ten = float(10 ** abs(d))
    scaled = f"({{0}} * {ten!r})" if d > 0 else f"({{0}} / {ten!r})"
    rounded = ELEMENTWISE["round_half_even"].replace("{0}", scaled)
    return c.elementwise(f"({rounded}) / {ten!r}" if d > 0 else f"({rounded}) * {ten!r}", x)


@lowers(aten.nextafter)
def nextafter_lowering(c: Ctx, x, y):
    """A step of the output's own precision: float32's next value is not float64's."""
    return c.elementwise(ELEMENTWISE["nextafter32" if c.out_dtype() == "float32" else "nextafter"], x, y)


@lowers(aten.polygamma)
def polygamma_lowering(c: Ctx, n: int, x):
    """ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n! ζ(n+1, x) for n ≥ 1; the digamma function for n = 0."""
    if int(n) == 0:
        return c.elementwise(ELEMENTWISE["digamma"], x)
    factor = (-1.0) ** (int(n) + 1) * math.factorial(int(n))
    return c.elementwise(f"{factor!r} * zeta({float(int(n) + 1)!r}, {{0}})", x)


@lowers(aten.frexp)
def frexp_lowering(c: Ctx, x):
    """(mantissa in [0.5, 1) with x's sign, exponent): ``x = mantissa · 2^exponent``; 0 gives (0, 0)."""
    exponent = f"select({{0}} == 0.0, 0.0, floor(log2(abs({{0}}))) + 1.0)"
    mantissa = c.elementwise(f"select({{0}} == 0.0, 0.0, {{0}} / 2.0 ** ({exponent}))", x, i=0)
    return (mantissa, c.elementwise(exponent, x, i=1))


@lowers(aten.rrelu_with_noise_functional)
def rrelu_lowering(c: Ctx, x, noise, lower=1.0 / 8, upper=1.0 / 3, training: bool = False, generator=None):
    """Randomised leaky ReLU: in training, negative inputs scaled by a slope drawn in [lower, upper]
    (the fixed uniform pattern of ``workloads.in_forward``, as the golden run draws it); in eval, by
    the mean slope. Returns the result and the slopes used (1 where the input is non-negative)."""
    from solar_assets.workloads.in_forward import random_pattern_expr

    shape = c.out_shape(0)
    if training:
        u = random_pattern_expr("uniform", [f"i{k}" for k in range(len(shape))], shape)
        slope = f"({float(lower)!r} + {float(upper) - float(lower)!r} * ({u}))"
    else:
        slope = repr((float(lower) + float(upper)) / 2)
    out = c.elementwise(f"select({{0}} >= 0.0, {{0}}, {{0}} * {slope})", x, i=0)
    return (out, lambda: c.elementwise(f"select({{0}} >= 0.0, 1.0, {slope})", x, i=1))


@lowers(aten.add)
def add_lowering(c: Ctx, x, y, alpha=1):
    return c.elementwise(ELEMENTWISE["add"] if alpha == 1 else "{0} + {1} * {2}", x, y, alpha)


@lowers(aten.sub, aten.rsub)
def sub_lowering(c: Ctx, x, y, alpha=1):
    if c.node.target.overloadpacket is aten.rsub:
        x, y = y, x
    return c.elementwise(ELEMENTWISE["sub"] if alpha == 1 else "{0} - {1} * {2}", x, y, alpha)


@lowers(aten.gelu)
def gelu_lowering(c: Ctx, x, approximate: str = "none"):
    return c.elementwise(ELEMENTWISE["gelu_tanh" if approximate == "tanh" else "gelu"], x)


@lowers(aten.clamp, aten.hardtanh)
def clamp_lowering(c: Ctx, x, lo=None, hi=None):
    if c.node.target.overloadpacket is aten.hardtanh:
        lo, hi = (-1.0 if lo is None else lo), (1.0 if hi is None else hi)
    template = "{0}"
    if lo is not None:
        template = f"max({template}, {{1}})"
    if hi is not None:
        template = f"min({template}, {{2}})"
    return c.elementwise(template, x, 0.0 if lo is None else lo, 0.0 if hi is None else hi)


@lowers(aten.leaky_relu)
def leaky_relu_lowering(c: Ctx, x, slope: float = 0.01):
    return c.elementwise("select({0} > 0.0, {0}, {0} * {1})", x, slope)


@lowers(aten.elu)
def elu_lowering(c: Ctx, x, alpha=1.0, scale=1.0, input_scale=1.0):
    return c.elementwise("select({0} > 0.0, {0} * {2}, (exp({0} * {3}) - 1.0) * {1} * {2})",
                         x, float(alpha), float(scale), float(input_scale))


@lowers(aten.full, aten.full_like, aten.scalar_tensor)
def full_lowering(c: Ctx, *args, **kwargs):
    value = args[0] if c.node.target.overloadpacket is aten.scalar_tensor else args[1]
    return c.elementwise("{0}", value)


@lowers(aten.empty, aten.empty_like, aten.empty_permuted, aten.empty_strided, aten.new_empty, aten.new_empty_strided)
def empty_lowering(c: Ctx, *args, **kwargs):
    """Storage without values: a tensor no kernel writes (what later writes it is the work). One the
    workload returns as it is holds whatever memory held, which no IR can reproduce."""
    if any(user.op == "output" for user in c.node.users):
        raise LoweringGap("the workload returns torch.empty's uninitialised memory: there are no values to validate")
    out = c.new_output()
    c.b.uninitialised.add(out.base)
    return out


@lowers(aten.zeros_like, aten.ones_like)
def zeros_like_lowering(c: Ctx, *args, **kwargs):
    return c.elementwise("{0}", 0 if c.node.target.overloadpacket is aten.zeros_like else 1)


@lowers(aten.arange)
def arange_lowering(c: Ctx, *args, **kwargs):
    start, step = (args[0], args[2] if len(args) > 2 else 1) if len(args) >= 2 else (0, 1)
    return c.elementwise("{0} + {1} * i0", start, step)
