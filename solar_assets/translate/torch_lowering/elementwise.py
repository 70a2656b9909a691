"""Pointwise ops: one '=' kernel each, broadcasting by numpy rules."""
from __future__ import annotations

import torch

from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers

aten = torch.ops.aten

SQRT_HALF = 0.7071067811865476
SQRT_2_OVER_PI = 0.7978845608028654

UNARY_TEMPLATES = {
    aten.relu: "max({0}, 0.0)",
    aten.exp: "exp({0})",
    aten.log: "log({0})",
    aten.tanh: "tanh({0})",
    aten.sigmoid: "sigmoid({0})",
    aten.sqrt: "sqrt({0})",
    aten.rsqrt: "rsqrt({0})",
    aten.abs: "abs({0})",
    aten.neg: "-{0}",
    aten.erf: "erf({0})",
    aten.reciprocal: "1.0 / {0}",
    aten.sin: "sin({0})",
    aten.cos: "cos({0})",
    aten.sign: "sign({0})",
    aten.silu: "{0} * sigmoid({0})",
    aten.log1p: "log1p({0})",
    aten.expm1: "expm1({0})",
    aten.floor: "floor({0})",
    aten.ceil: "ceil({0})",
    aten.isnan: "{0} != {0}",
    aten.logical_not: "not {0}",
    aten.bitwise_not: "not {0}",
}
BINARY_TEMPLATES = {
    aten.mul: "{0} * {1}",
    aten.div: "{0} / {1}",
    aten.maximum: "max({0}, {1})",
    aten.minimum: "min({0}, {1})",
    aten.pow: "{0} ** {1}",
    aten.eq: "{0} == {1}",
    aten.ne: "{0} != {1}",
    aten.lt: "{0} < {1}",
    aten.le: "{0} <= {1}",
    aten.gt: "{0} > {1}",
    aten.ge: "{0} >= {1}",
    aten.logical_and: "{0} and {1}",
    aten.logical_or: "{0} or {1}",
    aten.bitwise_and: "{0} and {1}",
    aten.bitwise_or: "{0} or {1}",
}


def _unary(template: str):
    def lowering(c: Ctx, x, *_, **__):
        return c.elementwise(template, x)
    return lowering


def _binary(template: str):
    def lowering(c: Ctx, x, y, **kwargs):
        if kwargs.get("rounding_mode") is not None:
            raise LoweringGap(f"div with rounding_mode={kwargs['rounding_mode']!r}")
        return c.elementwise(template, x, y)
    return lowering


for _op, _t in UNARY_TEMPLATES.items():
    lowers(_op)(_unary(_t))
for _op, _t in BINARY_TEMPLATES.items():
    lowers(_op)(_binary(_t))


@lowers(aten.add)
def add_lowering(c: Ctx, x, y, alpha=1):
    return c.elementwise("{0} + {1}" if alpha == 1 else "{0} + {1} * {2}", x, y, alpha)


@lowers(aten.sub, aten.rsub)
def sub_lowering(c: Ctx, x, y, alpha=1):
    if c.node.target.overloadpacket is aten.rsub:
        x, y = y, x
    return c.elementwise("{0} - {1}" if alpha == 1 else "{0} - {1} * {2}", x, y, alpha)


@lowers(aten.gelu)
def gelu_lowering(c: Ctx, x, approximate: str = "none"):
    if approximate == "tanh":
        return c.elementwise(f"0.5 * {{0}} * (1.0 + tanh({SQRT_2_OVER_PI} * ({{0}} + 0.044715 * {{0}} ** 3)))", x)
    return c.elementwise(f"0.5 * {{0}} * (1.0 + erf({{0}} * {SQRT_HALF}))", x)


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


@lowers(aten.where)
def where_lowering(c: Ctx, cond, x, y):
    return c.elementwise("select({0}, {1}, {2})", cond, x, y)


@lowers(aten.elu)
def elu_lowering(c: Ctx, x, alpha=1.0, scale=1.0, input_scale=1.0):
    return c.elementwise("select({0} > 0.0, {0} * {2}, (exp({0} * {3}) - 1.0) * {1} * {2})",
                         x, float(alpha), float(scale), float(input_scale))


@lowers(aten.full, aten.full_like, aten.scalar_tensor)
def full_lowering(c: Ctx, *args, **kwargs):
    value = args[0] if c.node.target.overloadpacket is aten.scalar_tensor else args[1]
    return c.elementwise("{0}", value)


@lowers(aten.zeros_like, aten.ones_like)
def zeros_like_lowering(c: Ctx, *args, **kwargs):
    return c.elementwise("{0}", 0 if c.node.target.overloadpacket is aten.zeros_like else 1)


@lowers(aten.arange)
def arange_lowering(c: Ctx, *args, **kwargs):
    start, step = (args[0], args[2] if len(args) > 2 else 1) if len(args) >= 2 else (0, 1)
    return c.elementwise("{0} + {1} * i0", start, step)
