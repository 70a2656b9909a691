"""The JAX golden run with ``jax.random``'s generator fixed, as the IR fixes it
(``translate.jax_lowering.random``): the function's jaxpr evaluated equation by equation, JAX's own
primitives for everything but the draws, whose values are the uniform pattern of
``workloads.in_forward``. Everything a workload computes from its draws (a normal's ``erf_inv``, a
Gumbel's logs, ``categorical``'s argmax) is JAX's own computation on those values.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from solar_assets.workloads.in_forward import pattern_array
from solar_assets.workloads.jax_dispatch import sub_jaxprs

_CALLS = ("jit", "pjit", "closed_call", "core_call")


def draws_random(closed: Any) -> bool:
    """Whether the jaxpr (or one it calls) makes a PRNG key: then the golden run fixes the draws."""
    def walk(jaxpr: Any) -> bool:
        for eqn in jaxpr.eqns:
            if eqn.primitive.name in ("random_seed", "random_wrap"):
                return True
            for sub in sub_jaxprs(eqn):
                if walk(sub):
                    return True
        return False
    return walk(closed.jaxpr)


def with_fixed_draws(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` with its ``_uniform`` and ``random_gamma`` draws replaced by the pattern."""
    import jax

    def run(*args: Any) -> Any:
        closed, shape = jax.make_jaxpr(f, return_shape=True)(*args)
        flat = jax.tree_util.tree_leaves(args)
        outs = _eval(closed.jaxpr, list(closed.consts), flat)
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shape), outs)
    return run


def _draw_dtype(aval: Any) -> Any:
    """The draw's dtype: the equation's, but float64 in the float64 run (x64 on), where the IR's
    pattern is exact: a float32 draw there would differ from it by float32 rounding."""
    import jax.numpy as jnp

    return jnp.float64 if jnp.asarray(1.0).dtype == jnp.float64 else aval.dtype


def _uniform(aval: Any, minval: Any, maxval: Any) -> Any:
    import jax.numpy as jnp

    dtype = _draw_dtype(aval)
    u = jnp.asarray(pattern_array("uniform", aval.shape), dtype=dtype)
    minval, maxval = jnp.asarray(minval, dtype=dtype), jnp.asarray(maxval, dtype=dtype)
    return jnp.maximum(minval, minval + (maxval - minval) * u)


def _eval(jaxpr: Any, consts: list[Any], args: list[Any]) -> list[Any]:
    import jax.numpy as jnp

    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return v.val if type(v).__name__ == "Literal" else env[v]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        invals = [read(v) for v in eqn.invars]
        name = eqn.primitive.name
        if name in _CALLS and eqn.params.get("name") == "_uniform" and len(invals) == 3:
            outs = [_uniform(eqn.outvars[0].aval, invals[1], invals[2])]
        elif name == "random_gamma":
            aval = eqn.outvars[0].aval
            dtype = _draw_dtype(aval)
            drawn = jnp.asarray(invals[1], dtype=dtype) * jnp.asarray(pattern_array("uniform", aval.shape), dtype=dtype)
            outs = [jnp.log(drawn) if eqn.params.get("log_space") else drawn]
        elif name in _CALLS:
            inner = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
            outs = _eval(getattr(inner, "jaxpr", inner), list(getattr(inner, "consts", [])), invals)
        else:
            with eqn.ctx.manager:  # as jax.core.eval_jaxpr binds an equation
                result = eqn.primitive.bind(*invals, **eqn.primitive.get_bind_params(eqn.params))
            outs = list(result) if eqn.primitive.multiple_results else [result]
        for v, x in zip(eqn.outvars, outs):
            env[v] = x
    return [np.asarray(read(v)) if not hasattr(read(v), "shape") else read(v) for v in jaxpr.outvars]
