"""Elementwise primitives: one '=' kernel each (operands have the output's shape or are rank 0).

Functions the IR has no scalar function for are written with the ones it has (``exp2(x)`` is
``exp(x·ln 2)``, ``tan`` is ``sin/cos``); those it cannot express at all (``atan``, ``asin``,
``lgamma``, bit operations) have no lowering, so the tracer names them.
"""
from __future__ import annotations

from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap, SymTensor
from solar_assets.translate.jax_lowering.registry import lowers

LN2 = 0.6931471805599453

UNARY = {
    "neg": "-{0}", "sign": "sign({0})", "floor": "floor({0})", "ceil": "ceil({0})",
    "exp": "exp({0})", "exp2": f"exp({{0}} * {LN2})", "log": "log({0})", "log1p": "log1p({0})",
    "expm1": "expm1({0})", "tanh": "tanh({0})", "logistic": "sigmoid({0})", "sin": "sin({0})",
    "cos": "cos({0})", "tan": "sin({0}) / cos({0})", "sqrt": "sqrt({0})", "rsqrt": "rsqrt({0})",
    "cbrt": "sign({0}) * abs({0}) ** 0.3333333333333333", "abs": "abs({0})", "erf": "erf({0})",
    "erfc": "1.0 - erf({0})", "square": "{0} * {0}",
    "sinh": "(exp({0}) - exp(-{0})) * 0.5", "cosh": "(exp({0}) + exp(-{0})) * 0.5",
    "asinh": "sign({0}) * log(abs({0}) + sqrt({0} * {0} + 1.0))",
    "acosh": "log({0} + sqrt({0} * {0} - 1.0))", "atanh": "0.5 * log((1.0 + {0}) / (1.0 - {0}))",
    "is_finite": "({0} == {0}) and (abs({0}) < inf)",
}
BINARY = {
    "add": "{0} + {1}", "add_any": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}",
    "pow": "{0} ** {1}", "max": "max({0}, {1})", "min": "min({0}, {1})",
    "eq": "{0} == {1}", "ne": "{0} != {1}", "lt": "{0} < {1}", "le": "{0} <= {1}", "gt": "{0} > {1}",
    "ge": "{0} >= {1}",
}
BOOLEAN = {"and": "{0} and {1}", "or": "{0} or {1}", "xor": "{0} != {1}", "not": "not {0}"}


def _unary(template: str):
    def lowering(c: JCtx, x, **_):
        return c.elementwise(template, x)
    return lowering


def _binary(template: str):
    def lowering(c: JCtx, x, y, **_):
        return c.elementwise(template, x, y)
    return lowering


for _name, _t in UNARY.items():
    lowers(_name)(_unary(_t))
for _name, _t in BINARY.items():
    lowers(_name)(_binary(_t))


def _boolean(name: str, template: str):
    def lowering(c: JCtx, *xs, **_):
        if c.out_dtype() != "bool":
            raise LoweringGap(f"bitwise {name} on {c.out_dtype()} (only bool operands are supported)")
        return c.elementwise(template, *xs)
    return lowering


for _name, _t in BOOLEAN.items():
    lowers(_name)(_boolean(_name, _t))


def _trunc(v: str) -> str:
    return f"select({v} >= 0, floor({v}), ceil({v}))"


@lowers("div")
def div_lowering(c: JCtx, x, y, **_):
    """Integer division rounds toward zero, as in C (and XLA)."""
    if c.out_dtype().startswith(("int", "uint")):
        return c.elementwise(_trunc("({0} / {1})"), x, y)
    return c.elementwise("{0} / {1}", x, y)


@lowers("rem")
def rem_lowering(c: JCtx, x, y, **_):
    """C fmod (the sign of the dividend), for floats and integers alike."""
    return c.elementwise("{0} - {1} * " + _trunc("({0} / {1})"), x, y)


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
    if int(rounding_method) == 0:  # away from zero
        return c.elementwise("sign({0}) * floor(abs({0}) + 0.5)", x)
    # to nearest even: floor(x + 0.5), one less at a tie that landed on an odd number
    return c.elementwise("select((floor({0} + 0.5) - {0} == 0.5) and (floor({0} + 0.5) * 0.5 != "
                         "floor(floor({0} + 0.5) * 0.5)), floor({0} + 0.5) - 1.0, floor({0} + 0.5))", x)


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
    return c.elementwise("min(max({1}, {0}), {2})", lo, x, hi)


@lowers("convert_element_type")
def convert_lowering(c: JCtx, x, **_):
    out = c.out_dtype()
    if isinstance(x, SymTensor) and x.dtype == out:
        return x
    if out == "bool":
        return c.elementwise("{0} != 0", x)
    if out.startswith(("int", "uint")) and c.in_dtype(0).startswith(("float", "bfloat")):
        return c.elementwise(_trunc("{0}"), x)  # toward zero, as C casts
    return c.elementwise("{0}", x)


@lowers("stop_gradient", "copy", "copy_p", "optimization_barrier")
def identity_lowering(c: JCtx, *xs, **_):
    return xs[0] if len(xs) == 1 and not c.eqn.primitive.multiple_results else list(xs)


@lowers("reduce_precision")
def reduce_precision_lowering(c: JCtx, x, *, exponent_bits: int, mantissa_bits: int):
    native = {"float32": (8, 23), "float64": (11, 52), "float16": (5, 10), "bfloat16": (8, 7),
              "float8_e4m3fn": (4, 3), "float8_e5m2": (5, 2)}
    if native.get(c.out_dtype()) != (exponent_bits, mantissa_bits):
        raise LoweringGap(f"reduce_precision to {exponent_bits} exponent / {mantissa_bits} mantissa bits")
    return x
