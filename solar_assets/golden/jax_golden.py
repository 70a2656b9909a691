"""Golden outputs of a JAX / Flax workload: JAX on the CPU, float32 as written, then float64.

The float64 run enables x64 only inside ``jax.enable_x64(True)`` (scoped: nothing else in the
process changes), casts the float inputs, parameters and closed-over constants to float64 and
runs the same function again, like the torch path's ``outputs64``. Both runs are on the CPU at the
validation size, each compiled whole where that is cheaper than eager dispatch
(``workloads.jax_dispatch``). bf16 and fp8 arrays are kept widened to float32 (exact), like the torch
path's; a cast to a narrow dtype inside the function rounds in the float64 run too. A function
that cannot run under x64 (it builds float32 values of its own) gets no float64 outputs: only the
float32 comparison runs, and validation notes it.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from solar_assets.golden.golden import Golden
from solar_assets.ir.dtypes import to_storable
from solar_assets.workloads import WorkloadError, WorkloadSource
from solar_assets.workloads.jax_dispatch import cheaper_whole, run_once
from solar_assets.workloads.jax_loader import load_jax_workload

log = logging.getLogger(__name__)


def _arrays(result: object, path: str) -> list[np.ndarray]:
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    out = []
    for r in items:
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise WorkloadError(f"{path}: the function returned {type(r).__name__}; a workload returns an array or a "
                                f"tuple of arrays")
        a = np.array(r)
        if np.iscomplexobj(a):  # the IR holds a complex array as its real and imaginary planes
            out += [to_storable(np.ascontiguousarray(a.real)), to_storable(np.ascontiguousarray(a.imag))]
        else:
            out.append(to_storable(a))
    return out


def _to64(x):
    import jax.numpy as jnp

    return jnp.asarray(x, dtype=jnp.float64) if jnp.issubdtype(x.dtype, jnp.floating) else jnp.asarray(x)


def make_jax_golden(src: WorkloadSource, constants: dict[str, int] | None = None) -> Golden:
    """Run the JAX workload (float32 as written, then float64 with x64 enabled in scope)."""
    import jax

    from solar_assets.golden.jax_random import draws_random, with_fixed_draws
    from solar_assets.translate.jax_tracer import array_consts, flat_function, make_workload_jaxpr

    start = time.perf_counter()
    constants = dict(constants or {})
    w = load_jax_workload(src, constants)
    f, names = flat_function(w)
    closed, _ = make_workload_jaxpr(w)
    whole = cheaper_whole(closed.jaxpr)  # both runs compiled whole, or both eager (workloads.jax_dispatch)
    if draws_random(closed):  # jax.random with the generator fixed, as the IR fixes it
        f = with_fixed_draws(f)
    params = {n: to_storable(np.array(w.params[n])) for n in names}
    params.update({f"const:{i}": to_storable(np.asarray(a)) for i, a in array_consts(closed)})
    try:
        outputs = _arrays(run_once(f, [w.params[n] for n in names], *w.inputs, whole=whole), src.path)
    except WorkloadError:
        raise
    except Exception as e:
        raise WorkloadError(f"{src.path}: running the JAX function failed: {type(e).__name__}: {e}") from e
    outputs64, why = _float64_run(f, w, names, outputs, src.path, whole)
    meta = {"workload": src.name, "sha256": src.sha256, "framework": "jax"}
    if why:
        meta["float64"] = why
    return Golden(
        inputs=[to_storable(np.array(x)) for x in w.inputs],
        params=params,
        outputs=outputs,
        outputs64=outputs64,
        seconds=time.perf_counter() - start,
        meta=meta,
        constants=constants,
    )


def _float64_run(f, w, names: list[str], outputs: list[np.ndarray], path: str,
                 whole: bool) -> tuple[list[np.ndarray] | None, str]:
    """The outputs in float64, or None and why not: a function that builds float32 values of its own
    (a harness's init value, a ``bitcast`` that depends on the width) fails, or changes the outputs'
    shapes, under x64; then only the float32 comparison runs (validation says so)."""
    import jax

    try:
        with jax.enable_x64(True):
            plist64 = [_to64(np.asarray(w.params[n])) for n in names]
            inputs64 = [_to64(np.asarray(x)) for x in w.inputs]
            outputs64 = _arrays(run_once(f, plist64, *inputs64, whole=whole), path)
    except Exception as e:  # noqa: BLE001 - the float32 run worked: the workload is fine, x64 is not
        why = f"the float64 run failed ({type(e).__name__}: {str(e).splitlines()[0][:160]})"
        log.info("%s: %s; only the float32 comparison runs", path, why)
        return None, why
    shapes, shapes64 = [o.shape for o in outputs], [o.shape for o in outputs64]
    if shapes != shapes64:
        why = f"the float64 run returns other shapes ({shapes64} for {shapes})"
        log.info("%s: %s; only the float32 comparison runs", path, why)
        return None, why
    return outputs64, ""
