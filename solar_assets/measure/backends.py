"""Run a workload file on this host: torch eager / torch.compile, or JAX op-by-op / jax.jit.

A backend name is framework-neutral: ``eager`` runs the framework op by op, ``compile`` runs its
compiler (``torch.compile`` for PyTorch, ``jax.jit`` for JAX; ``jit`` is accepted as a synonym).
Each runner returns a zero-argument callable that runs the workload once on fixed inputs and
waits for the result (``jax.block_until_ready``), so that timing it times the computation.
Nothing is cached between calls of ``runner_for`` beyond what the frameworks cache themselves
(``torch.compile``'s and XLA's caches are keyed by the code they compile).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from solar_assets.errors import SolarError

logger = logging.getLogger(__name__)

BACKENDS = ("eager", "compile")
AUTO = "auto"
"""How each framework is normally run: PyTorch eagerly, JAX under ``jax.jit`` (op-by-op JAX pays a
Python dispatch per primitive that no user ships)."""
NATIVE = {"torch": "eager", "jax": "compile"}
ALIASES = {"jit": "compile", "torch.compile": "compile", "jax.jit": "compile"}
LABELS = {("torch", "eager"): "torch eager", ("torch", "compile"): "torch.compile",
          ("jax", "eager"): "jax eager", ("jax", "compile"): "jax.jit"}


class MeasureError(SolarError):
    """A workload that cannot be run on this host; the message names the file and the backend."""


def parse_backends(text: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """``"eager,compile"`` → ``("eager", "compile")``, in the order given, duplicates dropped."""
    items = text.split(",") if isinstance(text, str) else list(text)
    names = []
    for item in (i.strip().lower() for i in items):
        if not item:
            continue
        name = ALIASES.get(item, item)
        if name not in BACKENDS and name != AUTO:
            raise MeasureError(f"unknown backend {item!r}; known: {AUTO}, {', '.join(BACKENDS)} (jit = compile)")
        if name not in names:
            names.append(name)
    if not names:
        raise MeasureError("no backend named; use e.g. --backends eager,compile")
    return tuple(names)


def resolve_backends(backends: tuple[str, ...], framework: str) -> tuple[str, ...]:
    """``auto`` becomes the framework's native backend (``NATIVE``); duplicates dropped, order kept."""
    resolved = (NATIVE.get(framework, "eager") if b == AUTO else b for b in backends)
    return tuple(dict.fromkeys(resolved))


@dataclass
class Runner:
    run: Callable[[], object]
    label: str
    set_threads: Callable[[int], None] | None = None  # None: the framework manages its threads


def runner_for(src, backend: str, threads: int) -> Runner:
    """A callable running the workload ``src`` (a WorkloadSource) once with ``backend``."""
    framework = getattr(src, "framework", "torch")
    if framework == "jax":
        return _jax_runner(src, backend)
    if framework != "torch":
        raise MeasureError(f"{src.path}: cannot run a {framework!r} workload (torch or jax only)")
    return _torch_runner(src, backend, threads)


def _torch_runner(src, backend: str, threads: int) -> Runner:
    import torch

    from solar_assets.workloads import load_torch_workload

    torch.set_num_threads(threads)
    workload = load_torch_workload(src)
    model, inputs = workload.model, workload.inputs
    fn = torch.compile(model) if backend == "compile" else model

    def run() -> object:
        with torch.no_grad():
            return fn(*inputs)

    return Runner(run, LABELS[("torch", backend)], torch.set_num_threads)


def _jax_runner(src, backend: str) -> Runner:
    try:
        from solar_assets.workloads.jax_loader import load_jax_workload
    except ImportError as e:
        raise MeasureError(f"{src.path}: JAX workloads cannot be loaded yet (no solar_assets.workloads "
                           f"jax loader: {e}); skipped") from None
    import jax
    import jax.numpy as jnp

    workload = load_jax_workload(src)
    params = {k: jnp.asarray(v) for k, v in workload.params.items()}
    inputs = [jnp.asarray(x) for x in workload.inputs]
    fn = jax.jit(workload.fn) if backend == "compile" else workload.fn

    def run() -> object:
        return jax.block_until_ready(fn(params, *inputs))

    return Runner(run, LABELS[("jax", backend)])
