"""Reductions, arg-reductions, cumulative scans and window reductions: JAX primitives mapped onto
the lowering core (``core.reduce``, ``core.scan``, ``core.window``).
"""
from __future__ import annotations

from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.translate.core.window import window_reduce
from solar_assets.translate.core.scan import SCANS, scan
from solar_assets.translate.core.reduce import UPDATES, arg_reduce, reduce_into

# JAX primitive -> canonical reduction (``core.reduce.UPDATES``); reduce_and / reduce_or on bools
REDUCTIONS = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "prod",
              "reduce_and": "all", "reduce_or": "any"}


def _reduction(op: str):
    def lowering(c: JCtx, x, *, axes, **_):
        x = c.tensor(x, c.out_dtype())
        return reduce_into(c.b, c.name, x, sorted(int(a) for a in axes), UPDATES[op], c.new_output())
    return lowering


for _name, _op in REDUCTIONS.items():
    lowers(_name)(_reduction(_op))


@lowers("argmax", "argmin")
def arg_reduce_lowering(c: JCtx, x, *, axes, index_dtype=None):
    update = "max=" if c.eqn.primitive.name == "argmax" else "min="
    return arg_reduce(c.b, c.name, x, int(axes[0]), update, c.new_output())


def _scan(op: str):
    def lowering(c: JCtx, x, *, axis: int, reverse: bool = False):
        return scan(c.b, c.name, x, axis, op, c.new_output(), reverse=reverse)
    return lowering


for _name in SCANS:
    lowers(_name)(_scan(_name))


# reduce_window_*: pooling. (update, pad value read outside the input)
WINDOWS = {"reduce_window_sum": ("+=", 0.0), "reduce_window_max": ("max=", float("-inf")),
           "reduce_window_min": ("min=", float("inf"))}


def _window(name: str):
    update, pad = WINDOWS[name]

    def lowering(c: JCtx, x, *, window_dimensions, window_strides, padding, base_dilation=None,
                 window_dilation=None, **_):
        if base_dilation is not None and any(d != 1 for d in base_dilation):
            raise LoweringGap("reduce_window with base_dilation")
        from solar_assets.translate.jax_lowering.views import padded_whole

        wdil = list(window_dilation or [1] * len(x.shape))
        pads = [(int(lo), int(hi)) for lo, hi in padding]
        src = padded_whole(c, x, pad, c.name + "_in") if any(lo or hi for lo, hi in pads) else x
        return window_reduce(c.b, c.name, src, c.new_output(), window_dimensions, window_strides, wdil,
                             [lo for lo, _ in pads], update)

    return lowering


for _name in WINDOWS:
    lowers(_name)(_window(_name))
