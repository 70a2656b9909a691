"""The canonical elementwise ops: one template each over the IR's scalar vocabulary.

Both frontends map their ops onto these names (``torch_lowering.elementwise``: ATen op → name;
``jax_lowering.elementwise``: primitive → name), so an op is written once and reaches both.
A template formats its operands' reads (``{0}``, ``{1}``, ...) into a kernel expression that
uses only the IR's scalar functions (``ir.expr.SCALAR_FUNCTIONS``, which the executor's code
generator implements under the same names). Functions the IR has no scalar function for are
written with the ones it has (``exp2(x)`` is ``exp(x·ln 2)``, ``tan`` is ``sin/cos``); those it
cannot express at all (bit operations on integers, Airy functions) have no entry.
"""
from __future__ import annotations

LN2 = 0.6931471805599453
SQRT_HALF = 0.7071067811865476
SQRT_2_OVER_PI = 0.7978845608028654


def trunc(v: str) -> str:
    """Rounding toward zero, as C casts and integer division do."""
    return f"select({v} >= 0, floor({v}), ceil({v}))"


UNARY = {
    # the IR's own scalar functions
    **{f: f"{f}({{0}})" for f in ("exp", "log", "log1p", "expm1", "tanh", "sigmoid", "sin", "cos", "sqrt", "rsqrt",
                                    "abs", "erf", "sign", "floor", "ceil", "asin", "acos", "atan", "log2", "log10")},
    # special functions (``ir.scalar_functions``: SciPy's Cephes in the executor)
    **{f: f"{f}({{0}})" for f in ("lgamma", "digamma", "erfinv", "erfcx", "ndtri", "log_ndtr", "bessel_i0",
                                    "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_j0", "bessel_j1", "bessel_y0",
                                    "bessel_y1", "bessel_k0", "bessel_k1", "bessel_k0e", "bessel_k1e")},
    "spherical_bessel_j0": "select(abs({0}) == inf, 0.0, select({0} == 0.0, 1.0, sin({0}) / {0}))",
    "isinf": "abs({0}) == inf",
    "signbit": "copysign(1.0, {0}) < 0.0",
    "angle": "select({0} != {0}, {0}, select({0} < 0.0, pi, 0.0))",  # of a real number
    "neg": "-{0}",
    "relu": "max({0}, 0.0)",
    "reciprocal": "1.0 / {0}",
    # written with them
    "exp2": f"exp({{0}} * {LN2})",
    "tan": "sin({0}) / cos({0})",
    "cbrt": "sign({0}) * abs({0}) ** 0.3333333333333333",
    "erfc": "1.0 - erf({0})",
    "square": "{0} * {0}",
    "sinh": "(exp({0}) - exp(-{0})) * 0.5",
    "cosh": "(exp({0}) + exp(-{0})) * 0.5",
    "asinh": "sign({0}) * log(abs({0}) + sqrt({0} * {0} + 1.0))",
    "acosh": "log({0} + sqrt({0} * {0} - 1.0))",
    "atanh": "0.5 * log((1.0 + {0}) / (1.0 - {0}))",
    "silu": "{0} * sigmoid({0})",
    "gelu": f"0.5 * {{0}} * (1.0 + erf({{0}} * {SQRT_HALF}))",
    "gelu_tanh": f"0.5 * {{0}} * (1.0 + tanh({SQRT_2_OVER_PI} * ({{0}} + 0.044715 * {{0}} ** 3)))",
    "trunc": trunc("{0}"),
    "round_half_away": "sign({0}) * floor(abs({0}) + 0.5)",
    # to nearest even: floor(x + 0.5), one less at a tie that landed on an odd number
    "round_half_even": "select((floor({0} + 0.5) - {0} == 0.5) and (floor({0} + 0.5) * 0.5 != "
                       "floor(floor({0} + 0.5) * 0.5)), floor({0} + 0.5) - 1.0, floor({0} + 0.5))",
    "is_finite": "({0} == {0}) and (abs({0}) < inf)",
    "isnan": "{0} != {0}",
    "not": "not {0}",
    "identity": "{0}",
    "to_bool": "{0} != 0",
}
BINARY = {
    "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "div": "{0} / {1}", "pow": "{0} ** {1}",
    "max": "max({0}, {1})", "min": "min({0}, {1})",
    "eq": "{0} == {1}", "ne": "{0} != {1}", "lt": "{0} < {1}", "le": "{0} <= {1}", "gt": "{0} > {1}",
    "ge": "{0} >= {1}",
    "and": "{0} and {1}", "or": "{0} or {1}", "xor": "({0} != 0) != ({1} != 0)",  # truthiness, as logical_xor
    "fmod": "fmod({0}, {1})",  # C fmod: the sign of the dividend (torch.fmod, lax.rem)
    "int_div": trunc("({0} / {1})"),  # division rounded toward zero (C and XLA integer division)
    "floor_div": "floor({0} / {1})",  # Python's //
    "remainder": "{0} - {1} * floor({0} / {1})",  # Python's %: the sign of the divisor
    "atan2": "atan2({0}, {1})", "hypot": "hypot({0}, {1})", "copysign": "copysign({0}, {1})",
    "fmax": "select({0} != {0}, {1}, select({1} != {1}, {0}, max({0}, {1})))",  # NaN only where both are
    "fmin": "select({0} != {0}, {1}, select({1} != {1}, {0}, min({0}, {1})))",
    "ldexp": "{0} * 2.0 ** {1}",
    "nextafter32": "nextafter32({0}, {1})", "nextafter": "nextafter({0}, {1})",
    "igamma": "gammainc({0}, {1})", "igammac": "gammaincc({0}, {1})",  # regularised P(a, x), Q(a, x)
    "zeta": "zeta({0}, {1})",  # Hurwitz zeta(x, q)
    # orthogonal polynomials P_n(x): x, then the degree n
    **{f: f"{f}_poly({{0}}, {{1}})" for f in ("chebyshev_t", "chebyshev_u", "chebyshev_v", "chebyshev_w",
                                               "hermite_h", "hermite_he", "laguerre_l", "legendre_p")},
    **{f"shifted_{f}": f"{f}_poly(2.0 * {{0}} - 1.0, {{1}})" for f in ("chebyshev_t", "chebyshev_u", "chebyshev_v",
                                                                       "chebyshev_w")},
}
TERNARY = {
    "select": "select({0}, {1}, {2})",
    "clamp": "min(max({0}, {1}), {2})",  # x, lo, hi
    "betainc": "betainc({0}, {1}, {2})",  # regularised incomplete beta I_x(a, b): a, b, x
}
ELEMENTWISE: dict[str, str] = {**UNARY, **BINARY, **TERNARY}
ARITY: dict[str, int] = {**{n: 1 for n in UNARY}, **{n: 2 for n in BINARY}, **{n: 3 for n in TERNARY}}
