"""Run the workload in its framework to get the outputs its IR must reproduce.

Two runs: the model as written (float32, the reference users care about) and the same
model and inputs in float64, which lets validation compare at ~1e-9 so that an indexing
bug cannot hide inside float32 rounding. Both run at the *validation size*: the file as
written, or with its size constants rebound (``constants``, chosen by ``golden.sizing``).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solar_assets.workloads import WorkloadError, WorkloadSource, load_torch_workload, size_label
from solar_assets.workloads.in_forward import (
    attributes_to_buffers,
    buffer_state,
    deterministic_random,
    restore_buffers,
)


@dataclass
class Golden:
    inputs: list[np.ndarray]
    params: dict[str, np.ndarray]  # keyed 'param:<name>' / 'buffer:<name>'
    outputs: list[np.ndarray]
    outputs64: list[np.ndarray] | None = None
    seconds: float = 0.0
    meta: dict[str, str] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)  # the rebound size constants; {} = full size

    @property
    def size_label(self) -> str:
        """``"full"``, or the rebound constants as ``"BATCH=3,DIM=64"``."""
        return size_label(self.constants)

    def bindings(self, dtype: type = np.float64) -> dict[str, np.ndarray]:
        """Values keyed by IR binding strings; float arrays converted to ``dtype``."""
        out = {f"input:{i}": a for i, a in enumerate(self.inputs)}
        out.update(self.params)
        return {k: (v.astype(dtype) if np.issubdtype(v.dtype, np.floating) else v) for k, v in out.items()}


def _flatten_outputs(result: object, path: str) -> list:
    import torch

    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)) and all(isinstance(r, torch.Tensor) for r in result):
        return list(result)
    raise WorkloadError(f"{path}: forward returned {type(result).__name__}; expected a tensor or a tuple of tensors")


def _to_numpy(t) -> np.ndarray:
    if not hasattr(t, "detach"):  # a Python scalar among the inputs (the IR holds it as a constant)
        return np.asarray(t)
    return t.detach().cpu().numpy().copy()


def make_golden(src: WorkloadSource, constants: dict[str, int] | None = None) -> Golden:
    """Run the workload (float32 as written, then float64) on its seeded inputs, at the file's own
    size or with ``constants`` rebound."""
    import torch

    start = time.perf_counter()
    constants = dict(constants or {})
    w = load_torch_workload(src, constants)
    attributes_to_buffers(w.model)  # as the tracer does (solar_assets.workloads.in_forward)
    params = {f"param:{n}": _to_numpy(p) for n, p in w.model.named_parameters()}
    params.update({f"buffer:{n}": _to_numpy(b) for n, b in w.model.named_buffers()})
    state = buffer_state(w.model)
    try:
        with torch.no_grad():
            with deterministic_random():
                outputs = _flatten_outputs(w.model(*w.inputs), src.path)
            restore_buffers(w.model, state)
            model64 = w.model.to(torch.float64)
            inputs64 = [x.to(torch.float64) if isinstance(x, torch.Tensor) and torch.is_floating_point(x) else x
                        for x in w.inputs]
            with deterministic_random(torch.float64):
                outputs64 = _flatten_outputs(model64(*inputs64), src.path)
    except WorkloadError:
        raise
    except Exception as e:
        raise WorkloadError(f"{src.path}: running the model failed: {type(e).__name__}: {e}") from e
    return Golden(
        inputs=[_to_numpy(x) for x in w.inputs],
        params=params,
        outputs=[_to_numpy(o) for o in outputs],
        outputs64=[_to_numpy(o) for o in outputs64],
        seconds=time.perf_counter() - start,
        meta={"workload": src.name, "sha256": src.sha256},
        constants=constants,
    )


def save_golden(g: Golden, path: str | Path) -> None:
    arrays = {f"in/{i}": a for i, a in enumerate(g.inputs)}
    arrays.update({f"param/{k}": v for k, v in g.params.items()})
    arrays.update({f"out/{i}": a for i, a in enumerate(g.outputs)})
    arrays.update({f"out64/{i}": a for i, a in enumerate(g.outputs64 or [])})
    arrays["meta/constants"] = np.array(json.dumps(g.constants))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)


def load_golden(path: str | Path) -> Golden:
    with np.load(path) as z:
        def group(prefix: str) -> list[np.ndarray]:
            keys = sorted((k for k in z.files if k.startswith(prefix + "/")), key=lambda k: int(k.split("/")[1]))
            return [z[k] for k in keys]

        params = {k[len("param/"):]: z[k] for k in z.files if k.startswith("param/")}
        out64 = group("out64")
        constants = json.loads(str(z["meta/constants"][()])) if "meta/constants" in z.files else {}
        return Golden(inputs=group("in"), params=params, outputs=group("out"), outputs64=out64 or None,
                      constants=constants)
