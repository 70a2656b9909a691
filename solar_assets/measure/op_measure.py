"""Per-op measurement of one workload file on this host: the calls its eager run makes, timed.

PyTorch: the model under ``torch.profiler`` (``op_profile.profile_torch``), the calls read from
the exported Chrome trace as for a user's own trace. JAX: the top-level equations of the
workload's jaxpr, each run as JAX runs it op by op (one compiled call per equation) and timed to
``block_until_ready``. Both flush the caches before each iteration, outside the timed calls, as
the workload-level measurement does. Only ``eager`` is measured per op: a compiled run fuses the
ops, so its time belongs to no single op (its headroom is the workload-level one).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from solar_assets.measure.backends import LABELS, MeasureError
from solar_assets.measure.op_profile import Profile, ProfiledCall, profile_torch

logger = logging.getLogger(__name__)

ITERATIONS = 10
WARMUP = 3


def profile_workload(path: str | Path, backend: str = "eager", iterations: int = ITERATIONS, warmup: int = WARMUP,
                     flush_bytes: int | None = None, threads: int | None = None) -> Profile:
    """The per-op profile of the file at ``path`` run by ``backend`` (``eager`` only)."""
    import os

    from solar_assets.measure.flush import CacheFlusher
    from solar_assets.workloads import read_workload_source

    src = read_workload_source(path)
    if backend != "eager":
        label = LABELS.get((src.framework, backend), backend)
        raise MeasureError(f"{src.path}: {label} fuses the ops, so it has no per-op times: per-op measurement "
                           "runs the eager backend (the compiled run's headroom is the workload's)")
    flush = CacheFlusher(flush_bytes)
    if src.framework == "jax":
        from solar_assets.workloads.jax_loader import load_jax_workload

        return profile_jax_eqns(load_jax_workload(src), iterations, warmup, flush)
    import torch

    from solar_assets.workloads import load_torch_workload

    torch.set_num_threads(threads or len(os.sched_getaffinity(0)))
    workload = load_torch_workload(src)
    profile = profile_torch(workload.model, workload.inputs, iterations, warmup, flush)
    profile.source = f"torch.profiler, {LABELS[('torch', 'eager')]} on this host"
    return profile


def profile_jax_eqns(workload, iterations: int = ITERATIONS, warmup: int = WARMUP,
                     flush: Callable[[], None] | None = None) -> Profile:
    """Each top-level equation of the workload's jaxpr as one compiled call, timed per iteration;
    the calls are named by their primitive (``dot_general``), as the IR's ``Origin.call_op``."""
    import jax

    from solar_assets.translate.jax_tracer import make_workload_jaxpr

    closed, names = make_workload_jaxpr(workload)
    jaxpr = closed.jaxpr
    leaves = jax.tree_util.tree_leaves([[workload.params[n] for n in names], *workload.inputs])
    if len(leaves) != len(jaxpr.invars):
        raise MeasureError(f"{workload.source.path}: the jaxpr takes {len(jaxpr.invars)} arguments, the workload "
                           f"gives {len(leaves)}")
    calls = [_eqn_call(eqn) for eqn in jaxpr.eqns]
    flush = flush or (lambda: None)

    def one_iteration(record: bool) -> list[ProfiledCall]:
        env = dict(zip(jaxpr.constvars, closed.consts))
        env.update(zip(jaxpr.invars, leaves))
        out = []
        for eqn, fn in zip(jaxpr.eqns, calls):
            args = [env[v] if not hasattr(v, "val") else v.val for v in eqn.invars]
            start = time.perf_counter()
            results = jax.block_until_ready(fn(*args))
            elapsed = time.perf_counter() - start
            for v, x in zip(eqn.outvars, results):
                env[v] = x
            if record:
                out.append(ProfiledCall(name=eqn.primitive.name, host_s=elapsed))
        return out

    for _ in range(warmup):
        flush()
        one_iteration(False)
    runs = []
    for _ in range(iterations):
        flush()
        runs.append(one_iteration(True))
    return Profile(iterations=runs, device=False, source="jax eager on this host: each top-level equation one "
                   "compiled call, timed to block_until_ready")


def _eqn_call(eqn) -> Callable[..., list]:
    """The equation alone as a compiled function of its inputs (its sub-programs and parameters fixed)."""
    import jax

    primitive = eqn.primitive

    def run(*args):
        bound = primitive.get_bind_params(eqn.params)  # JAX < 0.5: (sub-functions, params); now params
        subfuns, params = bound if isinstance(bound, tuple) else ((), bound)
        with eqn.ctx.manager:
            out = primitive.bind(*subfuns, *args, **params)
        return list(out) if primitive.multiple_results else [out]

    return jax.jit(run)
