"""The JAX tests' oracle: a traced IR run in float64 against JAX in float64 (x64 in scope)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from solar_assets.execute import execute_program
from solar_assets.translate.jax_tracer import trace_function


def _primitives(jaxpr) -> set[str]:
    found = set()
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for value in eqn.params.values():
            for item in (value if isinstance(value, (tuple, list)) else [value]):
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns"):
                    found |= _primitives(inner)
    return found


def check(fn, *xs, primitives=(), program=None):
    """Trace ``fn`` (unless ``program`` is given), run the IR in float64, compare with JAX in float64;
    returns the program."""
    xs = [np.asarray(x) for x in xs]
    present = _primitives(jax.make_jaxpr(fn)(*xs).jaxpr)
    for p in primitives:
        assert p in present, f"{p} not in the jaxpr ({sorted(present)})"
    program = program or trace_function(fn, xs)
    bindings = {f"input:{i}": (x.astype(np.float64) if x.dtype.kind == "f" else x) for i, x in enumerate(xs)}
    got = execute_program(program, bindings)
    with jax.enable_x64(True):
        ref = fn(*[jnp.asarray(v) for v in bindings.values()])
    ref = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        r = np.asarray(r)
        assert g.shape == r.shape
        if r.dtype.kind in "biu":
            np.testing.assert_array_equal(g, r)
        else:
            scale = max(1.0, float(np.abs(r).max())) if r.size else 1.0
            np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-9 * scale)
    return program
