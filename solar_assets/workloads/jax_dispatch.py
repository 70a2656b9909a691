"""Run a JAX function once on concrete values, compiled as one program where that is cheaper than
JAX's eager dispatch.

Eager execution compiles one XLA program per distinct equation (primitive, shapes, parameters):
40–75 ms each on a 2-core machine, so a small Flax model's initialisation alone compiles 55–67 of
them (3.5–4 s), and its float64 run as many again. One ``jax.jit`` of the whole function costs
1.5–8 ms per equation plus a fixed part: less for a small model, more for a deep one whose layers
repeat the same equations (24 identical transformer blocks: 7,465 equations, 67 distinct; 10.2 s
compiled whole against 3.0 s eager). So the function is traced once and compiled whole when its
equations number at most ``EQUATIONS_PER_DISTINCT`` times its distinct ones; otherwise, or when it
does not trace, it runs eagerly as written.

Both are XLA's CPU kernels for the same equations, so the values agree up to the rounding of
operations XLA fuses and of ``COMPILER_OPTIONS`` (``tests/test_jax_dispatch.py`` compares them).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

EQUATIONS_PER_DISTINCT = 25
"""Compile whole while (all equations, nested ones included) ≤ this × (distinct top-level
equations): from the per-equation costs above, ~50 ms per distinct equation eager against ~2 ms
per equation compiled."""


COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}
"""XLA's options for a function compiled whole here. It runs once, at the validation size, so LLVM's
optimisation of XLA's generated loops costs more than it saves: the shipped JAX models' golden runs
(inputs, initialisation, float32 and float64 runs) took 13.5 s instead of 23.6 s at level 0. The
level changes results by rounding only (LLVM at its default level contracts ``a*b+c`` into fused
multiply-adds; dots and convolutions are library calls either way): on the shipped models the
inputs, parameters and outputs moved by 1–2 float32 ulps (one parameter of the scan model 1.4e-6
of its largest), less than the float32 run's distance from the float64 one, which is what
validation allows for (``tests/test_jax_dispatch.py`` compares them)."""


def run_once(f: Callable[..., Any], *args: Any, whole: bool | None = None, computed_only: bool = False) -> Any:
    """``f(*args)``: compiled whole or eagerly as ``whole`` says, or, left None, as is cheaper
    (module docstring) for its trace. Eager runs the Python again rather than the trace's
    equations: a function's jitted callees then share their compiles with later eager runs of
    the same code (a Flax model's forward after its initialisation), which the trace's would not
    (126 compiles against 177 for the 24-block model). ``computed_only``: eager too where an
    output is not computed by an equation (a NumPy array or Python number passed through, which
    ``jax.jit`` would return as a JAX array, its dtype canonicalised)."""
    import jax

    if whole is not None:
        return _compiled(jax.jit(f).trace(*args), args) if whole else f(*args)
    try:
        traced = jax.jit(f).trace(*args)
    except Exception as e:  # noqa: BLE001 - not traceable as a whole (concrete Python control flow): eager
        log.debug("not compiled whole (%s: %s); eager", type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        return f(*args)
    jaxpr = traced.jaxpr.jaxpr
    if computed_only and not _all_computed(jaxpr):
        log.debug("eager: an output is passed through, not computed")
        return f(*args)
    return _compiled(traced, args) if cheaper_whole(jaxpr) else f(*args)


def _compiled(traced: Any, args: tuple[Any, ...]) -> Any:
    return traced.lower().compile(compiler_options=COMPILER_OPTIONS)(*args)


def _all_computed(jaxpr: Any) -> bool:
    made = {id(v) for e in jaxpr.eqns for v in e.outvars}
    return all(id(v) in made for v in jaxpr.outvars)


def cheaper_whole(jaxpr: Any) -> bool:
    """Whether one compile of ``jaxpr`` costs less than eager dispatch's compile per distinct equation."""
    total, distinct = equation_counts(jaxpr)
    whole = total <= EQUATIONS_PER_DISTINCT * max(distinct, 1)
    log.debug("%s: %d equations, %d distinct", "compiled whole" if whole else "eager", total, distinct)
    return whole


def equation_counts(jaxpr: Any) -> tuple[int, int]:
    """(equations, nested ones included; distinct top-level equations, as eager dispatch compiles
    them: a call of a jitted function is one, keyed by the callee)."""
    return _total(jaxpr), len({_signature(e) for e in jaxpr.eqns})


def _total(jaxpr: Any) -> int:
    return sum(1 + sum(_total(sub) for sub in sub_jaxprs(e)) for e in jaxpr.eqns)


def sub_jaxprs(eqn: Any) -> list[Any]:
    """The jaxprs an equation holds in its parameters (a call's, a loop's body, a branch's)."""
    out = []
    for value in eqn.params.values():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            inner = getattr(v, "jaxpr", v)
            if hasattr(inner, "eqns"):
                out.append(inner)
    return out


def _signature(eqn: Any) -> tuple[Any, ...]:
    params = tuple(sorted((k, _param_key(v)) for k, v in eqn.params.items()))
    return eqn.primitive.name, tuple(str(getattr(v, "aval", v)) for v in eqn.invars), params


def _param_key(value: Any) -> Any:
    if hasattr(getattr(value, "jaxpr", value), "eqns"):  # a callee: one compile per traced function
        return "jaxpr", id(getattr(value, "jaxpr", value))
    if isinstance(value, (list, tuple)):
        return tuple(_param_key(v) for v in value)
    return repr(value)
