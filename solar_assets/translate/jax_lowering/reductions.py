"""Reductions, arg-reductions and cumulative scans.

A reduction is one accumulating kernel over the operand's shape whose output subscript keeps
the non-reduced dims; an arg-reduction is the extreme, then the smallest position attaining it
(JAX returns the first); a cumulative op is a first-order recurrence reading its own output one
step back (a pad value supplies the start), its reverse form a reversed view on both sides.
"""
from __future__ import annotations

from solar_assets.translate.jax_lowering.context import JCtx, Lin, LoweringGap, SymTensor, lins, loop_vars
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.translate.core.affine import view_dim

UPDATES = {"reduce_sum": "+=", "reduce_max": "max=", "reduce_min": "min=", "reduce_prod": "*=",
           "reduce_and": "min=", "reduce_or": "max="}


def _reduce(c: JCtx, x: SymTensor, axes, update: str, expr: str = "{0}") -> SymTensor:
    axes = sorted(int(a) for a in axes)
    x = c.tensor(x, c.out_dtype())
    out = c.new_output()
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    out_idx = [lin for d, lin in enumerate(idx) if d not in axes]
    c.b.kernel(c.name, list(zip(v, x.shape)), out.access(out_idx), update, expr.format(x.access(idx)))
    return out


def _reduction(update: str):
    def lowering(c: JCtx, x, *, axes, **_):
        return _reduce(c, x, axes, update)
    return lowering


for _name, _update in UPDATES.items():
    lowers(_name)(_reduction(_update))


def _arg_reduce(c: JCtx, x: SymTensor, axis: int, update: str) -> SymTensor:
    ext = c.b.declare(c.name + "_ext", [s for d, s in enumerate(x.shape) if d != axis], x.dtype)
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    keep = [lin for d, lin in enumerate(idx) if d != axis]
    c.b.kernel(c.name + "_ext", list(zip(v, x.shape)), ext.access(keep), update, x.access(idx))
    out = c.new_output()
    big = x.shape[axis]  # no position: larger than any index
    c.b.kernel(c.name, list(zip(v, x.shape)), out.access(keep), "min=",
               f"select({x.access(idx)} == {ext.access(keep)}, {v[axis]}, {big})")
    return out


@lowers("argmax")
def argmax_lowering(c: JCtx, x, *, axes, index_dtype=None):
    return _arg_reduce(c, x, int(axes[0]), "max=")


@lowers("argmin")
def argmin_lowering(c: JCtx, x, *, axes, index_dtype=None):
    return _arg_reduce(c, x, int(axes[0]), "min=")


def _reversed(x: SymTensor, axis: int) -> SymTensor:
    old_of_new = [Lin.of(view_dim(d)) for d in range(len(x.shape))]
    old_of_new[axis] = Lin.constant(x.shape[axis] - 1) + Lin.of(view_dim(axis), -1)
    return x.reindex(x.shape, old_of_new)


# (pad value that starts the recurrence, the step as a template over {prev} and {x})
SCANS = {
    "cumsum": (0.0, "{prev} + {x}"),
    "cumprod": (1.0, "{prev} * {x}"),
    "cummax": (float("-inf"), "max({prev}, {x})"),
    "cummin": (float("inf"), "min({prev}, {x})"),
    "cumlogsumexp": (float("-inf"), "max({prev}, {x}) + log1p(exp(-abs({prev} - {x})))"),
}


def _scan(name: str):
    start, step = SCANS[name]

    def lowering(c: JCtx, x, *, axis: int, reverse: bool = False):
        axis %= len(x.shape)
        if c.out_dtype().startswith(("int", "uint", "bool")) and name in ("cummax", "cummin", "cumlogsumexp"):
            raise LoweringGap(f"{name} on {c.out_dtype()} (the start value is a float infinity)")
        src = _reversed(x, axis) if reverse else x
        out = c.new_output()
        c.b.decls[out.base].pad_value = start
        order = [d for d in range(len(x.shape)) if d != axis] + [axis]  # the scanned loop innermost
        v = loop_vars("i", len(x.shape))
        idx = lins(v)
        prev = list(idx)
        prev[axis] = idx[axis] + Lin.constant(-1)
        if name == "cumlogsumexp":  # -inf - -inf is nan: start from the first element instead
            first = f"select({v[axis]} == 0, {src.access(idx)}, " + step.format(
                prev=out.access(prev), x=src.access(idx)) + ")"
            expr = first
        else:
            expr = step.format(prev=out.access(prev), x=src.access(idx))
        c.b.kernel(c.name, [(v[d], x.shape[d]) for d in order], out.access(idx), "=", expr)
        return _reversed(out, axis) if reverse else out

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
        out_shape = c.out_shape()
        loops, x_idx, o_idx = [], [], []
        for d in range(len(x.shape)):
            loops.append((f"p{d}", out_shape[d]))
            o_idx.append(Lin.of(f"p{d}"))
            if window_dimensions[d] > 1:
                loops.append((f"k{d}", int(window_dimensions[d])))
                x_idx.append(Lin.of(f"p{d}", int(window_strides[d])) + Lin.of(f"k{d}", wdil[d])
                             + Lin.constant(-pads[d][0]))
            else:
                x_idx.append(Lin.of(f"p{d}", int(window_strides[d])) + Lin.constant(-pads[d][0]))
        out = c.new_output()
        c.b.kernel(c.name, loops, out.access(o_idx), update, src.access(x_idx))
        return out

    return lowering


for _name in WINDOWS:
    lowers(_name)(_window(_name))
