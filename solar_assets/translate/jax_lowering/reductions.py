"""Reductions, arg-reductions, cumulative scans and window reductions: JAX primitives mapped onto
the lowering core (``core.reduce``, ``core.scan``, ``core.window``).
"""
from __future__ import annotations

from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap, is_const
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
        from solar_assets.translate.jax_lowering.views import window_source

        wdil = list(window_dilation or [1] * len(x.shape))
        if x.dtype.startswith(("int", "uint")) and update != "+=":  # the integer extreme, not ±inf
            pad_value = _identity("max" if update == "max=" else "min", x.dtype)
        else:
            pad_value = pad
        src, pads_lo = window_source(c, x, pad_value, padding, base_dilation, c.name + "_in")
        return window_reduce(c.b, c.name, src, c.new_output(), window_dimensions, window_strides, wdil,
                             pads_lo, update)

    return lowering


for _name in WINDOWS:
    lowers(_name)(_window(_name))


# the binary primitives a reduce / reduce_window body may combine with: (update, combine, identity)
MONOIDS = {"add": ("+=", "{0} + {1}", 0), "add_any": ("+=", "{0} + {1}", 0), "mul": ("*=", "{0} * {1}", 1),
           "max": ("max=", "max({0}, {1})", float("-inf")), "min": ("min=", "min({0}, {1})", float("inf")),
           "or": ("max=", "{0} or {1}", False), "and": ("min=", "{0} and {1}", True)}


def body_monoids(body, n: int) -> list[str]:
    """The monoid primitive combining each operand of a ``reduce`` / ``reduce_window`` body: a
    body of ``n`` accumulators and ``n`` values whose output ``k`` is ``op(acc_k, x_k)`` for an
    op of ``MONOIDS``. Anything else (a comparison-driven select: an arg-reduction) is a gap."""
    jaxpr = getattr(body, "jaxpr", body)
    if getattr(body, "consts", ()) or jaxpr.constvars:
        raise LoweringGap("a reduction body that closes over constants")
    if len(jaxpr.invars) != 2 * n or len(jaxpr.outvars) != n:
        raise LoweringGap(f"a reduction body of {len(jaxpr.invars)} arguments and {len(jaxpr.outvars)} results")
    made = {}
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name not in MONOIDS or len(eqn.invars) != 2 or len(eqn.outvars) != 1:
            raise LoweringGap(f"a reduction body computing {name} (only {', '.join(sorted(MONOIDS))} of an "
                              "accumulator and a value are lowered)")
        made[eqn.outvars[0]] = (name, tuple(eqn.invars))
    ops = []
    for k, out in enumerate(jaxpr.outvars):
        name, args = made.get(out, (None, ()))
        pair = (jaxpr.invars[k], jaxpr.invars[n + k])
        if name is None or len(args) != 2 or not ({id(a) for a in args} == {id(a) for a in pair} and
                                                  args[0] is not args[1]):
            raise LoweringGap(f"a reduction body whose result {k} is not a monoid of accumulator {k} and value {k}")
        ops.append(name)
    if len(made) != n:
        raise LoweringGap("a reduction body with intermediate values")
    return ops


def _identity(op: str, dtype: str):
    """The op's identity as a number of ``dtype`` (the integer extremes for max / min of ints)."""
    value = MONOIDS[op][2]
    if dtype.startswith(("int", "uint")) and op in ("max", "min"):
        import numpy as np

        info = np.iinfo(np.dtype(dtype))
        return int(info.min if op == "max" else info.max)
    return value


def _with_init(c: JCtx, reduced, init, op: str, k: int):
    """``init ⊕ reduced``, output ``k``: the reduction started from ``init`` (nothing to do when
    ``init`` is the op's identity)."""
    if is_const(init) and init == MONOIDS[op][2]:
        return reduced
    return c.elementwise(MONOIDS[op][1], reduced, init, i=k)


@lowers("reduce")
def reduce_lowering(c: JCtx, *args, jaxpr, dimensions, **_):
    """``lax.reduce`` with a body of one monoid per operand (``body_monoids``); each operand is
    reduced on its own, then combined with its init value."""
    n = len(args) // 2
    ops = body_monoids(jaxpr, n)
    axes = sorted(int(a) for a in dimensions)
    outs = []
    for k, (x, init, op) in enumerate(zip(args[:n], args[n:], ops)):
        x = c.tensor(x, c.out_dtype(k))
        plain = is_const(init) and init == MONOIDS[op][2]
        out = c.new_output(k, f"{c.name}_out{k}" if n > 1 or not plain else None)
        reduce_into(c.b, c.name if n == 1 else f"{c.name}{k}", x, axes, MONOIDS[op][0], out)
        outs.append(_with_init(c, out, init, op, k))
    return outs


@lowers("reduce_window")
def reduce_window_lowering(c: JCtx, *args, jaxpr, consts=(), window_dimensions, window_strides, padding,
                           base_dilation=None, window_dilation=None, **_):
    """``lax.reduce_window`` with a monoid body: each window's result starts from ``init`` and
    takes in the operand's elements in the window; padding and base-dilation holes are skipped
    (XLA reduces over real elements only), so they read the op's identity, and a non-identity
    init is combined once with each window's result."""
    if consts:
        raise LoweringGap("a reduce_window body with constants")
    from solar_assets.translate.jax_lowering.views import window_source

    n = len(args) // 2
    ops = body_monoids(jaxpr, n)
    outs = []
    for k, (x, init, op) in enumerate(zip(args[:n], args[n:], ops)):
        x = c.tensor(x, c.out_dtype(k))
        wdil = list(window_dilation or [1] * len(x.shape))
        src, pads_lo = window_source(c, x, _identity(op, x.dtype), padding, base_dilation, f"{c.name}_in{k}")
        plain = is_const(init) and init == MONOIDS[op][2]
        out = c.new_output(k, None if plain and n == 1 else f"{c.name}_out{k}")
        window_reduce(c.b, c.name if n == 1 else f"{c.name}{k}", src, out, window_dimensions, window_strides,
                      wdil, pads_lo, MONOIDS[op][0])
        outs.append(_with_init(c, out, init, op, k))
    return outs
