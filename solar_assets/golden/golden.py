"""Run the workload in its framework to get the outputs its IR must reproduce.

Two runs: the model as written (in the file's own dtypes: float32, or bf16 / fp16 / fp8 where
the file says so; the reference users care about) and the same model and inputs in float64,
which lets validation compare at ~1e-9 so that an indexing bug cannot hide inside float32
rounding. The float64 run respects the file's casts: arithmetic in float64, a cast to a narrow
dtype rounded to it (``golden.reference64``), from the same (already rounded) inputs and weights.
bf16 and fp8 arrays are kept widened to float32, which holds each of their values exactly (npz
has no bf16); the IR's declarations say which dtype a tensor has. Both run at the *validation size*: the file as
written, or with its size constants rebound (``constants``, chosen by ``solar_assets.sizing``).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from solar_assets import cache_store
from solar_assets.golden.reference64 import run_float64
from ir_schemas import Program
from solar_assets.ir.dtypes import ir_dtype_name
from solar_assets.ir.updates import updated_target
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
    # inputs and buffers forward updated in place: binding -> value after the call (and in float64)
    updates: dict[str, np.ndarray] = field(default_factory=dict)
    updates64: dict[str, np.ndarray] = field(default_factory=dict)
    # a training step's ``UpdateLayout`` as JSON ("" for anything else): validation checks the
    # optimizer's results against its update of the IR's own gradients (``update_reference``)
    update_layout: str = ""

    @property
    def size_label(self) -> str:
        """``"full"``, or the rebound constants as ``"BATCH=3,DIM=64"``."""
        return size_label(self.constants)

    def bindings(self, dtype: type | None = np.float64) -> dict[str, np.ndarray]:
        """Values keyed by IR binding strings; float arrays converted to ``dtype`` (None: as they
        are, for ``execute_program``, whose binding converts and copies each once anyway)."""
        out = {f"input:{i}": a for i, a in enumerate(self.inputs)}
        out.update(self.params)
        if dtype is None:
            return out
        return {k: (v.astype(dtype) if np.issubdtype(v.dtype, np.floating) else v) for k, v in out.items()}

    def for_program(self, program: Program) -> Golden:
        """The golden outputs in ``program``'s output order: the framework's returns in order, and for
        an output that updates an input or buffer in place (``solar_assets.ir.updates``) that
        tensor's value after the call (its value before, where the call left it unchanged)."""
        targets = [updated_target(program.tensor(n)) for n in program.outputs]
        if not any(targets):
            return self
        before = {f"input:{i}": a for i, a in enumerate(self.inputs)} | self.params
        returned, returned64 = iter(self.outputs), iter(self.outputs64 or [])
        outputs, outputs64 = [], []
        for target in targets:
            if target is None:
                outputs.append(next(returned, None))
                outputs64.append(next(returned64, None))
            else:
                outputs.append(self.updates.get(target, before.get(target)))
                outputs64.append(self.updates64.get(target, before.get(target)))
        keep = next((i for i, o in enumerate(outputs) if o is None), len(outputs))  # compare reports a shortfall
        outputs, outputs64 = outputs[:keep], outputs64[:keep]
        return replace(self, outputs=outputs, outputs64=outputs64 if self.outputs64 is not None else None)

    def update_reference64(self, returned: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
        """A training step's updated parameters and optimizer states recomputed in float64 from the
        gradients in ``returned`` (the IR's values of the step's returns, by return index), keyed
        by return index; {} for a golden run of anything else (``golden.update_reference``)."""
        if not self.update_layout:
            return {}
        from solar_assets.golden.update_reference import update_reference64
        from solar_assets.workloads.training import UpdateLayout

        return update_reference64(UpdateLayout.from_json(self.update_layout), self.bindings(np.float64), returned)


def _flatten_outputs(result: object, path: str) -> list:
    """The returned tensors in order, a complex one as its real and imaginary planes (the IR holds
    a complex tensor as two real ones, ``translate.core.complex``)."""
    import torch

    def planes(t: torch.Tensor) -> list:
        return [t.real.contiguous(), t.imag.contiguous()] if t.is_complex() else [t]

    if isinstance(result, torch.Tensor):
        return planes(result)
    if isinstance(result, (tuple, list)) and all(isinstance(r, torch.Tensor) for r in result):
        return [p for r in result for p in planes(r)]
    raise WorkloadError(f"{path}: forward returned {type(result).__name__}; a workload returns a tensor or a tuple "
                        f"of tensors")


def _to_numpy(t, snapshot: bool = False) -> np.ndarray:
    """The tensor's values as NumPy: bf16 and fp8 widened to float32 (exact; NumPy has neither); a
    Python scalar among the inputs as a 0-d array (the IR holds it as a constant).

    The array shares the tensor's memory unless ``snapshot``: a value read before the run that the
    run may write in place (a parameter an optimizer steps, a buffer batch norm updates). Nothing
    writes the others afterwards: the inputs are copies the model never sees, the outputs and
    updates are the runs' own results (``restore_buffers`` and the float64 conversion rebind
    tensors, they do not write them). A copy of a fresh array is mostly page faults: 0.6 s for
    256 MB on the 2-core machine, ~0.3 s of a level-1 file's golden run. A tensor that is a view
    of a larger storage (an output ``h[:, -1]`` of a whole hidden state) is copied all the same,
    so that the golden value does not keep the rest of that storage alive."""
    if not hasattr(t, "detach"):
        return np.asarray(t)
    import torch

    t = t.detach().cpu()
    if t.is_floating_point() and ir_dtype_name(t.dtype) in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return t.to(torch.float32).numpy()  # a new tensor already
    whole = t.untyped_storage().nbytes() == t.numel() * t.element_size()
    return t.numpy().copy() if snapshot or not whole else t.numpy()


def make_golden(src: WorkloadSource, constants: dict[str, int] | None = None) -> Golden:
    """Run the workload (as written, then in float64 respecting its casts: ``reference64``) on its
    seeded inputs, at the file's own size or with ``constants`` rebound."""
    import torch

    start = time.perf_counter()
    constants = dict(constants or {})
    w = load_torch_workload(src, constants)
    attributes_to_buffers(w.model)  # as the tracer does (solar_assets.workloads.in_forward)
    from torch.utils._pytree import tree_leaves, tree_map

    def copied(x: object) -> object:  # a tensor, or a tuple of them (an LSTM's ``(h0, c0)``), copied
        return tree_map(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t, x)

    inputs = [copied(x) for x in w.inputs]  # before any update
    params = {f"param:{n}": _to_numpy(p, snapshot=True) for n, p in w.model.named_parameters()}
    first = {id(p): f"param:{n}" for n, p in w.model.named_parameters()}  # tied weights (an LM head
    for n, p in w.model.named_parameters(remove_duplicate=False):  # sharing the embedding): one array, every name
        params.setdefault(f"param:{n}", params[first[id(p)]])
    params.update({f"buffer:{n}": _to_numpy(b, snapshot=True) for n, b in w.model.named_buffers()})
    state = buffer_state(w.model)
    try:
        with torch.no_grad():
            args = [copied(x) for x in inputs]
            # the inputs as the export numbers them (``input:i``): a nested one's tensors one by one
            watch = UpdateWatch(w.model, tree_leaves(args), tree_leaves(inputs), state)
            with deterministic_random():
                outputs = _flatten_outputs(w.model(*args), src.path)
            updates = watch.updated(w.model, tree_leaves(args))
            restore_buffers(w.model, state)
            args64: list = []
            with deterministic_random(torch.float64):
                outputs64 = _flatten_outputs(run_float64(w.model, [copied(x) for x in inputs], args64), src.path)
            updates64 = watch.values(w.model, tree_leaves(args64), set(updates))
    except WorkloadError:
        raise
    except Exception as e:
        raise WorkloadError(f"{src.path}: running the model failed: {type(e).__name__}: {e}") from e
    return Golden(
        inputs=[_to_numpy(x) for x in tree_leaves(inputs)],
        params=params,
        outputs=[_to_numpy(o) for o in outputs],
        outputs64=[_to_numpy(o) for o in outputs64],
        seconds=time.perf_counter() - start,
        meta={"workload": src.name, "sha256": src.sha256},
        constants=constants,
        updates={k: _to_numpy(v) for k, v in updates.items()},
        updates64={k: _to_numpy(v) for k, v in updates64.items()},
        update_layout=layout.to_json() if (layout := _update_layout(w.model)) is not None else "",
    )


def _update_layout(model: object) -> object:
    """A training step's ``UpdateLayout`` (``workloads.torch_training.TrainStep``), else None."""
    made = getattr(model, "update_layout", None)
    return made() if callable(made) else None


class UpdateWatch:
    """Which inputs and buffers a forward call updates in place: a tensor whose version counter
    moved (an in-place op bumps it, through any view), a buffer rebound to a new tensor, or one
    whose values changed (a fused kernel such as batch norm's writes its running statistics
    without bumping the counter)."""

    def __init__(self, model: object, args: list, inputs: list, buffers: dict[str, object]) -> None:
        """``inputs`` and ``buffers``: copies of the values before the call (``args`` and the model's
        buffers are what the call will run on)."""
        self.inputs = [(x._version, before) if hasattr(x, "_version") else None for x, before in zip(args, inputs)]
        self.buffers = {n: (id(b), b._version, buffers[n]) for n, b in model.named_buffers()}

    @staticmethod
    def _changed(x: object, version: int, before: object) -> bool:
        import torch

        return x._version != version or x.shape != before.shape or not torch.equal(x.detach(), before)

    def updated(self, model: object, args: list) -> dict[str, object]:
        """binding -> value after the call, for each tensor the call changed."""
        out: dict[str, object] = {}
        for i, (x, seen) in enumerate(zip(args, self.inputs)):
            if seen is not None and self._changed(x, *seen):
                out[f"input:{i}"] = x.detach().clone()
        for n, b in model.named_buffers():
            seen = self.buffers.get(n)
            if seen is None or seen[0] != id(b) or self._changed(b, *seen[1:]):
                out[f"buffer:{n}"] = b.detach().clone()
        return out

    @staticmethod
    def values(model: object, args: list, bindings: set[str]) -> dict[str, object]:
        """The current values of ``bindings`` (after the float64 call: its widened arguments)."""
        buffers = dict(model.named_buffers())
        out: dict[str, object] = {}
        for binding in bindings:
            kind, _, key = binding.partition(":")
            value = args[int(key)] if kind == "input" and int(key) < len(args) else buffers.get(key)
            if value is not None:
                out[binding] = value.detach().clone()
        return out


def save_golden(g: Golden, path: str | Path) -> None:
    """Store ``g`` as an ``.npz`` cache entry with its digest (``solar_assets.cache_store``)."""
    arrays = {f"in/{i}": a for i, a in enumerate(g.inputs)}
    arrays.update({f"param/{k}": v for k, v in g.params.items()})
    arrays.update({f"out/{i}": a for i, a in enumerate(g.outputs)})
    arrays.update({f"out64/{i}": a for i, a in enumerate(g.outputs64 or [])})
    arrays.update({f"upd/{k}": v for k, v in g.updates.items()})
    arrays.update({f"upd64/{k}": v for k, v in g.updates64.items()})
    arrays["meta/constants"] = np.array(json.dumps(g.constants))
    arrays["meta/update"] = np.array(g.update_layout)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:  # a file object: np.savez would append '.npz' to a path
            np.savez(f, **arrays)

    cache_store.store_file(Path(path), write)


def load_golden(path: str | Path) -> Golden | None:
    """The golden outputs stored at ``path``; None when there are none, or when the entry is
    truncated or fails its digest (then it is deleted and a warning names the file)."""
    return cache_store.load_file(Path(path), _golden_from_npz)


def _golden_from_npz(path: Path) -> Golden:
    with np.load(path, allow_pickle=False) as z:
        def group(prefix: str) -> list[np.ndarray]:
            keys = sorted((k for k in z.files if k.startswith(prefix + "/")), key=lambda k: int(k.split("/")[1]))
            return [z[k] for k in keys]

        params = {k[len("param/"):]: z[k] for k in z.files if k.startswith("param/")}
        out64 = group("out64")
        constants = json.loads(str(z["meta/constants"][()])) if "meta/constants" in z.files else {}
        updates = {k[len("upd/"):]: z[k] for k in z.files if k.startswith("upd/")}
        updates64 = {k[len("upd64/"):]: z[k] for k in z.files if k.startswith("upd64/")}
        layout = str(z["meta/update"][()]) if "meta/update" in z.files else ""
        return Golden(inputs=group("in"), params=params, outputs=group("out"), outputs64=out64 or None,
                      constants=constants, updates=updates, updates64=updates64, update_layout=layout)
