"""Golden outputs of a JAX / Flax workload: JAX on the CPU, float32 as written, then float64.

The float64 run enables x64 only inside ``jax.enable_x64(True)`` (scoped: nothing else in the
process changes), casts the float inputs, parameters and closed-over constants to float64 and
runs the same function again, like the torch path's ``outputs64``. Both runs are eager on the
CPU at the validation size. bf16 and fp8 arrays are kept widened to float32 (exact), like the torch
path's; a cast to a narrow dtype inside the function rounds in the float64 run too.
"""
from __future__ import annotations

import time

import numpy as np

from solar_assets.golden.golden import Golden
from solar_assets.ir.dtypes import to_storable
from solar_assets.workloads import WorkloadError, WorkloadSource
from solar_assets.workloads.jax_loader import load_jax_workload


def _arrays(result: object, path: str) -> list[np.ndarray]:
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    out = []
    for r in items:
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise WorkloadError(f"{path}: the function returned {type(r).__name__}; a workload returns an array or a "
                                f"tuple of arrays")
        out.append(to_storable(np.array(r)))
    return out


def _to64(x):
    import jax.numpy as jnp

    return jnp.asarray(x, dtype=jnp.float64) if jnp.issubdtype(x.dtype, jnp.floating) else jnp.asarray(x)


def make_jax_golden(src: WorkloadSource, constants: dict[str, int] | None = None) -> Golden:
    """Run the JAX workload (float32 as written, then float64 with x64 enabled in scope)."""
    import jax

    from solar_assets.translate.jax_tracer import array_consts, flat_function, make_workload_jaxpr

    start = time.perf_counter()
    constants = dict(constants or {})
    w = load_jax_workload(src, constants)
    f, names = flat_function(w)
    closed, _ = make_workload_jaxpr(w)
    params = {n: to_storable(np.array(w.params[n])) for n in names}
    params.update({f"const:{i}": to_storable(np.asarray(a)) for i, a in array_consts(closed)})
    try:
        outputs = _arrays(f([w.params[n] for n in names], *w.inputs), src.path)
        with jax.enable_x64(True):
            plist64 = [_to64(np.asarray(w.params[n])) for n in names]
            inputs64 = [_to64(np.asarray(x)) for x in w.inputs]
            outputs64 = _arrays(f(plist64, *inputs64), src.path)
    except WorkloadError:
        raise
    except Exception as e:
        raise WorkloadError(f"{src.path}: running the JAX function failed: {type(e).__name__}: {e}") from e
    return Golden(
        inputs=[to_storable(np.array(x)) for x in w.inputs],
        params=params,
        outputs=outputs,
        outputs64=outputs64,
        seconds=time.perf_counter() - start,
        meta={"workload": src.name, "sha256": src.sha256, "framework": "jax"},
        constants=constants,
    )
