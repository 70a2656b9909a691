"""Elementwise primitives: aliases of the canonical elementwise ops (``core.elementwise``), one
'=' kernel each (operands have the output's shape or are rank 0), and the primitives whose
parameters pick the op (div on integers, round, integer_pow, select_n, convert_element_type).
A primitive the IR cannot express (bit operations on integers) has no lowering, so the tracer
names it.
"""
from __future__ import annotations

from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.core.elementwise import ELEMENTWISE
from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap, SymTensor
from solar_assets.translate.jax_lowering.registry import lowers

# JAX primitive -> canonical elementwise op (``core.elementwise``)
ALIASES = {
    "neg": "neg", "sign": "sign", "floor": "floor", "ceil": "ceil", "exp": "exp", "exp2": "exp2", "log": "log",
    "log1p": "log1p", "expm1": "expm1", "tanh": "tanh", "logistic": "sigmoid", "sin": "sin", "cos": "cos",
    "tan": "tan", "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt", "abs": "abs", "erf": "erf", "erfc": "erfc",
    "square": "square", "sinh": "sinh", "cosh": "cosh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "is_finite": "is_finite",
    "add": "add", "add_any": "add", "sub": "sub", "mul": "mul", "pow": "pow", "max": "max", "min": "min",
    "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "rem": "fmod",
    "asin": "asin", "acos": "acos", "atan": "atan", "atan2": "atan2", "lgamma": "lgamma", "digamma": "digamma",
    "erf_inv": "erfinv", "bessel_i0e": "bessel_i0e", "bessel_i1e": "bessel_i1e", "igamma": "igamma",
    "igammac": "igammac", "zeta": "zeta", "regularized_incomplete_beta": "betainc",
}
BOOLEAN = {"and": "and", "or": "or", "xor": "xor", "not": "not"}  # bitwise on ints: not lowered


def _canonical(name: str, boolean: bool = False):
    template = ELEMENTWISE[name]

    def lowering(c: JCtx, *xs, **_):
        if boolean and c.out_dtype() != "bool":
            raise LoweringGap(f"bitwise {name} on {c.out_dtype()} (only bool operands are supported)")
        return c.elementwise(template, *xs)
    return lowering


for _prim, _name in ALIASES.items():
    lowers(_prim)(_canonical(_name))
for _prim, _name in BOOLEAN.items():
    lowers(_prim)(_canonical(_name, boolean=True))


@lowers("div")
def div_lowering(c: JCtx, x, y, **_):
    """Integer division rounds toward zero, as in C (and XLA)."""
    return c.elementwise(ELEMENTWISE["int_div" if c.out_dtype().startswith(("int", "uint")) else "div"], x, y)


@lowers("nextafter")
def nextafter_lowering(c: JCtx, x, y):
    """A step of the output's own precision: float32's next value is not float64's."""
    return c.elementwise(ELEMENTWISE["nextafter32" if c.out_dtype() == "float32" else "nextafter"], x, y)


@lowers("polygamma")
def polygamma_lowering(c: JCtx, m, x):
    """ψ⁽ᵐ⁾(x) with a traced order: (-1)ᵐ⁺¹ m! ζ(m+1, x), and the digamma function where m = 0."""
    return c.elementwise("select({0} == 0.0, digamma({1}), (-1.0) ** ({0} + 1.0) * exp(lgamma({0} + 1.0)) "
                         "* zeta({0} + 1.0, {1}))", m, x)


@lowers("integer_pow")
def integer_pow_lowering(c: JCtx, x, *, y: int):
    if y == 0:
        return c.elementwise("{0} * 0 + 1", x)
    if y == 1:
        return c.elementwise("{0}", x)
    if y == 2:
        return c.elementwise("{0} * {0}", x)
    return c.elementwise(f"{{0}} ** {y}" if y > 0 else f"1.0 / {{0}} ** {-y}", x)


@lowers("round")
def round_lowering(c: JCtx, x, *, rounding_method=0):
    away = int(rounding_method) == 0
    return c.elementwise(ELEMENTWISE["round_half_away" if away else "round_half_even"], x)


@lowers("select_n")
def select_n_lowering(c: JCtx, which, *cases):
    """``cases[which]``: a bool picks case 1 when true; an integer indexes the cases."""
    if len(cases) == 1:
        return c.elementwise("{0}", cases[0])
    template = "{%d}" % len(cases)
    for k in range(len(cases) - 2, -1, -1):
        cond = "not {0}" if c.in_dtype(0) == "bool" else "{0} == %d" % k
        template = "select(%s, {%d}, %s)" % (cond, k + 1, template)
    return c.elementwise(template, which, *cases)


@lowers("clamp")
def clamp_lowering(c: JCtx, lo, x, hi):
    return c.elementwise(ELEMENTWISE["clamp"], x, lo, hi)


@lowers("convert_element_type")
def convert_lowering(c: JCtx, x, **_):
    out = c.out_dtype()
    if isinstance(x, SymTensor) and x.dtype == out:
        return x
    if out == "bool":
        return c.elementwise(ELEMENTWISE["to_bool"], x)
    if out.startswith(("int", "uint")) and c.in_dtype(0).startswith(("float", "bfloat")):
        return c.elementwise(ELEMENTWISE["trunc"], x)  # toward zero, as C casts
    return c.elementwise("{0}", x)


@lowers("stop_gradient", "copy", "copy_p", "optimization_barrier", "device_put")
def identity_lowering(c: JCtx, *xs, **_):
    return xs[0] if len(xs) == 1 and not c.eqn.primitive.multiple_results else list(xs)


@lowers("reduce_precision")
def reduce_precision_lowering(c: JCtx, x, *, exponent_bits: int, mantissa_bits: int):
    """Rounding to a narrower float format and back: a store into a tensor of that dtype (the IR
    rounds conversions into narrow dtypes to nearest even), read back in the operand's dtype."""
    native = {"float32": (8, 23), "float64": (11, 52), "float16": (5, 10), "bfloat16": (8, 7),
              "float8_e4m3fn": (4, 3), "float8_e5m2": (5, 2)}
    if native.get(c.out_dtype()) == (exponent_bits, mantissa_bits):
        return x
    narrow = next((d for d, bits in native.items() if bits == (exponent_bits, mantissa_bits)), None)
    if narrow is None:
        raise LoweringGap(f"reduce_precision to {exponent_bits} exponent / {mantissa_bits} mantissa bits")
    rounded = c.b.declare(c.name + "_rounded", c.out_shape(), narrow)
    v = loop_vars("i", len(c.out_shape()))
    c.b.kernel(rounded.base, list(zip(v, c.out_shape())), rounded.access(lins(v)), "=",
               c.read(x, lins(v), c.out_shape()))
    return c.elementwise("{0}", rounded)


@lowers("bitcast_convert_type")
def bitcast_convert_lowering(c: JCtx, x, *, new_dtype, **_):
    """A bitcast to the operand's own dtype is the identity; a reinterpretation of the bits as
    another dtype has no IR expression (the IR's scalars are values, not bit patterns)."""
    if c.in_dtype(0) == c.out_dtype() and c.out_shape() == tuple(getattr(x, "shape", ())):
        return x
    raise LoweringGap(f"bitcast_convert_type from {c.in_dtype(0)} to {c.out_dtype()} (a reinterpretation of "
                      "the bits, which the IR cannot express)")


