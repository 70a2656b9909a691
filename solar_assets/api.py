"""``solar.analyze``: the pipeline from Python, on a workload file or on a live model object.

    import solar
    result = solar.analyze(model, [x], hardware=["H100_SXM"])   # an nn.Module instance + its inputs
    result = solar.analyze(jax_fn, [x])                         # a JAX function of arrays
    result = solar.analyze(flax_module, [x])                    # a Flax linen or nnx module
    result = solar.analyze("data/workloads/gemm.py")            # a workload file (or a directory)
    result.to_pandas(); result.per_op.to_pandas(); print(result.ir); result.validation.to_pandas()

Every target goes through the same stages as ``solar analyze --no-dagster`` —
``solar_assets.pipeline.analyze_workload``: the tracer (torch.export / jax.make_jaxpr) and its
lowerings, the validation size, golden outputs, validation of the IR against them, the einsum graph,
the bounds and the cache-aware bound — so a notebook and the CLI cannot disagree.

A live object reaches those stages the way a file does: ``analyze`` writes a small generated
workload file that looks the object up in this process (``live_target``) and defines the
KernelBench-style names the loaders read (``Model`` / ``get_inputs`` / ``get_init_inputs`` for
PyTorch and Flax linen, ``forward`` / ``get_inputs`` for a JAX function or an nnx module). The
loaders then build and trace it exactly as a file's model. Each load builds a deep copy of the
module (the float64 golden run casts its model, and the user's must not change), and torch's
random state is restored afterwards (the loaders seed it).

**No caching for live objects**: the generated file cannot say what the object's results depend
on (its class's code, the functions its forward calls, its weights), so nothing of a live object is
read from or written to the cache; workload files use ``$SOLAR_HOME/cache`` as the CLI does. A
live object is validated at its own size (it has no size constants to scale down): a model over
the validation budget fails with the budget in the message (pass ``validation_budget``).
A Flax linen module's parameters are initialised by the loader with solar's fixed seed, as for a
file (the bounds do not depend on their values; validation uses the same ones on both sides).
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import re
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ir_schemas import ReportRow
from solar_assets import pipeline
from solar_assets.errors import SolarError
from solar_assets.report.per_op import PerOpTable, per_op_rows

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ValidationRow:
    """One output's comparison with the framework's own run (``solar_assets.validate``)."""

    workload: str
    output: str
    reference: str  # "outputs" (the framework as written) or "outputs64" (the float64 strong check)
    dtype: str
    shape: tuple[int, ...]
    max_abs_error: float
    max_rel_error: float
    tolerance_abs: float
    ok: bool
    message: str


class ValidationTable:
    """Per-output validation of every workload analysed (also of one that failed validation)."""

    def __init__(self, rows: Sequence[ValidationRow] = ()):
        self.rows = list(rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[ValidationRow]:
        return iter(self.rows)

    @property
    def ok(self) -> bool:
        return bool(self.rows) and all(r.ok for r in self.rows)

    def to_pandas(self):
        import pandas as pd

        names = [f.name for f in dataclasses.fields(ValidationRow)]
        return pd.DataFrame([dataclasses.asdict(r) for r in self.rows], columns=names)


@dataclass
class Analysis:
    """What ``solar.analyze`` found: report rows, the per-op breakdown, the IR and the validation."""

    rows: list[ReportRow]
    per_op: PerOpTable
    validation: ValidationTable
    irs: dict[str, str] = field(default_factory=dict)  # workload -> IR text (solar_assets.ir.printer)
    results: list[pipeline.WorkloadResult] = field(default_factory=list)

    @property
    def ir(self) -> str:
        """The IR text; with several workloads each under a ``# <workload>`` line."""
        if len(self.irs) == 1:
            return next(iter(self.irs.values()))
        return "\n\n".join(f"# {name}\n{text}" for name, text in self.irs.items())

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def errors(self) -> list[str]:
        return [r.error for r in self.results if r.error]

    def to_pandas(self):
        """One line per workload × hardware, one column per ``ReportRow`` field."""
        from solar_assets.report import rows_to_frame

        return rows_to_frame(self.rows)

    def table(self, wide: bool = False) -> str:
        from solar_assets.report.table import format_table

        return format_table(self.rows, wide=wide) if self.rows else "no workload produced bounds"

    @property
    def failures(self) -> list:
        """Each workload that produced no row: ``Failure`` (workload, source, status, stage, reason),
        as report.json and failures.csv list them."""
        from solar_assets.report.failures import failure_from_result

        return [failure_from_result(r) for r in self.results if r.error]

    def raise_for_errors(self) -> Analysis:
        """``self``, or a ``SolarError`` with every failure's line."""
        if self.errors:
            raise SolarError("\n".join(self.errors))
        return self

    def __repr__(self) -> str:
        lines = [self.table()] + [f"error: {e}" for e in self.errors]
        return "\n".join(lines)


# ---------------------------------------------------------------------------- live objects
@dataclass
class LiveTarget:
    """A live object as the names a workload file defines; the generated file reads them."""

    framework: str  # "torch" or "jax"
    inputs: list[Any]
    model: Any = None  # torch nn.Module, or a Flax linen module instance
    forward: Callable[..., Any] | None = None  # a JAX function (or an nnx module's call)

    def build_model(self, *args: Any) -> Any:
        """A fresh deep copy of the module (the loaders call ``Model(*get_init_inputs())``)."""
        return copy.deepcopy(self.model)

    def get_inputs(self) -> list[Any]:
        if self.framework == "torch":
            return [x.clone() if hasattr(x, "clone") else x for x in self.inputs]
        return list(self.inputs)

    def get_init_inputs(self) -> list[Any]:
        if self.framework == "jax" and self.model is not None:  # linen: the dataclass fields, in order
            return [getattr(self.model, f.name) for f in dataclasses.fields(self.model)
                    if f.init and f.name not in ("parent", "name")]
        return []


_LIVE: dict[str, LiveTarget] = {}


def live_target(key: str) -> LiveTarget:
    """The live object a generated workload file stands for (only inside the process that wrote it)."""
    try:
        return _LIVE[key]
    except KeyError:
        raise SolarError(f"live object {key!r} is gone: a file generated by solar.analyze works only while "
                         "that call runs, in its process") from None


_SHIM_HEAD = '''"""Generated by solar.analyze for a live {what}: valid only inside the call that wrote it."""
import {framework}  # noqa: F401 - the framework, as solar detects it from a file's imports
from solar_assets.api import live_target as _live_target

_target = _live_target({key!r})
get_inputs = _target.get_inputs
'''
_SHIM_BODY = {
    "torch": "Model = _target.build_model\nget_init_inputs = _target.get_init_inputs\n",
    "linen": "Model = type(_target.model)\nget_init_inputs = _target.get_init_inputs\n",
    "function": "forward = _target.forward\n",
}


class AnalysisError(SolarError):
    """No workload of a ``solar.analyze`` call produced bounds: one line per workload, each naming
    the file (or live object) and the stage it stopped in. ``analysis`` keeps what was made (the
    validation table of a failed check, the errors)."""

    def __init__(self, analysis: Analysis):
        self.analysis = analysis
        self.failures = analysis.failures
        super().__init__("\n".join(f"{f.reason} (stage: {f.stage})" if f.stage else f.reason for f in self.failures))


def _live_kind(target: Any, inputs: Sequence[Any] = ()) -> tuple[str, str]:
    """(framework, kind) of a live target: torch/torch, torch/function, jax/linen or jax/function.
    An nn.Module or a tensor can only exist once torch is loaded, so a JAX session's target is told
    apart without loading it; a plain callable goes where its inputs are from."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(target, torch.nn.Module):
        return "torch", "torch"
    try:
        from flax import linen, nnx

        if isinstance(target, linen.Module):
            return "jax", "linen"
        if isinstance(target, nnx.Module):
            return "jax", "function"  # called as a function: its state is closed over (weights as consts)
    except ImportError:  # pragma: no cover - flax is a dependency
        pass
    if callable(target) and not isinstance(target, type):
        if torch is not None and any(isinstance(x, torch.Tensor) for x in inputs):
            return "torch", "function"
        if inputs and not all(_is_array(x) for x in inputs):
            kinds = ", ".join(sorted({type(x).__name__ for x in inputs if not _is_array(x)}))
            raise SolarError(f"solar.analyze: a function's inputs are torch tensors or JAX / NumPy arrays, "
                             f"got {kinds}")
        return "jax", "function"
    raise SolarError(f"solar.analyze: cannot analyse a {type(target).__name__}; give an nn.Module instance, a JAX "
                     "function, a Flax module or the path of a workload file")


def _is_array(x: Any) -> bool:
    """A JAX or NumPy array, or a Python number: what a JAX function takes."""
    import numpy as np

    return isinstance(x, (np.ndarray, np.generic, int, float, bool)) or type(x).__module__.startswith(("jax", "jaxlib"))


def _torch_function_module(fn: Callable[..., Any]) -> Any:
    """A function over torch tensors as the ``nn.Module`` whose forward it is (no parameters)."""
    import torch

    class Function(torch.nn.Module):
        def forward(self, *args: Any) -> Any:
            return fn(*args)

    return Function()


def _default_name(target: Any) -> str:
    raw = getattr(target, "__name__", None) or type(target).__name__
    name = re.sub(r"[^0-9A-Za-z_]+", "_", str(raw)).strip("_") or "live"
    return name if name != "<lambda>" else "lambda_fn"


@contextmanager
def _live_file(target: Any, inputs: Sequence[Any], name: str) -> Iterator[Path]:
    """A generated workload file for ``target`` in a temporary directory, registered while it runs."""
    framework, kind = _live_kind(target, inputs)
    if framework == "torch":
        live = LiveTarget("torch", list(inputs), model=target if kind == "torch" else _torch_function_module(target))
        kind = "torch"
    elif kind == "linen":
        live = LiveTarget("jax", list(inputs), model=target)
    else:
        live = LiveTarget("jax", list(inputs), forward=target)
    key = uuid.uuid4().hex
    what = {"torch": "nn.Module", "linen": "Flax linen module", "function": "JAX function"}[kind]
    text = _SHIM_HEAD.format(what=f"{what} ({type(target).__name__})", framework=framework, key=key) + _SHIM_BODY[kind]
    _LIVE[key] = live
    try:
        with tempfile.TemporaryDirectory(prefix="solar_live_") as tmp:
            path = Path(tmp) / f"{name}.py"
            path.write_text(text, encoding="utf-8")
            yield path
    finally:
        _LIVE.pop(key, None)


@contextmanager
def _torch_rng_kept() -> Iterator[None]:
    """The loaders seed torch; a notebook's random stream must not change because it asked for a bound.
    Only where torch is loaded already (a JAX user's session never loads it for this)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with torch.random.fork_rng(devices=[]):
        yield


# ---------------------------------------------------------------------------- analyze
def analyze(target: Any, inputs: Sequence[Any] | None = None, *, hardware: str | Sequence[str] = pipeline.DEFAULT_HARDWARE,
            name: str | None = None, target_latency_s: float | None = None, target_hz: float | None = None,
            translator: str | None = None, cache_aware: bool = True, home: str | Path | None = None,
            validation_budget: Any = None, train: bool | str = False, optimizer: str | None = None,
            loss: str | None = None) -> Analysis:
    """Analyse ``target`` on each of ``hardware`` and return an ``Analysis``.

    ``target``: an ``nn.Module`` instance, a JAX function of arrays, a Flax linen / nnx module
    (each with ``inputs``, the forward arguments), or a workload file or directory path (``inputs``
    must then be None: the file's ``get_inputs()`` gives them). ``name`` names a live object's
    workload (default: its class or function name). ``target_latency_s`` / ``target_hz`` add the
    inverse roofline. A function goes to the framework of its inputs (over torch tensors: the
    forward of a module; over JAX arrays: a JAX function). Errors behave one way: a usage error (a
    bad target or inputs, an unknown hardware name) raises ``SolarError``, and so does a call none
    of whose workloads produced bounds (``AnalysisError``: one line per workload, naming the file
    or object and the stage: a wrong input shape, a file that does not run). When some workloads
    produced bounds the others are in ``Analysis.failures`` (status, stage, reason) and
    ``.errors``; ``.raise_for_errors()`` raises them.

    ``train=True`` bounds one training step instead of one forward pass (``solar analyze --train``):
    ``optimizer`` "adamw" (default), "sgd" or "none", ``loss`` "auto" (default), "sum" or "mean";
    its rows are named ``stem[train]`` and its per-op rows carry their phase.
    """
    hardware_names = [hardware] if isinstance(hardware, str) else list(hardware)
    specs = [pipeline.load_spec(h) for h in hardware_names]  # a bad name is a usage error, before any work
    if target_hz is not None:
        if target_latency_s is not None:
            raise SolarError("give target_latency_s or target_hz, not both")
        if not target_hz > 0:
            raise SolarError(f"target_hz must be a positive rate, got {target_hz!r}")
        target_latency_s = 1.0 / target_hz
    if not train and (optimizer or loss):
        raise SolarError("optimizer= and loss= describe a training step: add train=True")
    from solar_assets.workloads.training import TrainSpec

    options = dict(target_latency_s=target_latency_s, translator=translator, cache_aware=cache_aware,
                   validation_budget=validation_budget,
                   train=TrainSpec(optimizer=optimizer or "adamw", loss=loss or "auto") if train else None)
    home_dir = pipeline.solar_home(home)
    if isinstance(target, (str, Path)):
        if inputs is not None:
            raise SolarError(f"{target}: a workload file draws its own inputs (get_inputs()); pass inputs=None")
        from solar_assets.workloads import discover_workloads

        paths = discover_workloads(target)
        if not paths:
            raise SolarError(f"{target}: no workload files")
        runs = [_run(p, hardware_names, specs, home_dir / "cache", options, live=None) for p in paths]
    else:
        if inputs is None:
            raise SolarError(f"solar.analyze: a live {type(target).__name__} needs its inputs (a list of tensors or arrays)")
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        label = name or _default_name(target)
        with _torch_rng_kept(), _live_file(target, inputs, label) as path:
            runs = [_run(path, hardware_names, specs, None, options, live=f"<live {type(target).__name__} {label}>")]
    analysis = Analysis(rows=[row for run in runs for row in run.result.rows],
                        per_op=PerOpTable(r for run in runs for r in run.per_op),
                        validation=ValidationTable(v for run in runs for v in run.validation),
                        irs={run.result.workload: run.ir for run in runs if run.ir},
                        results=[run.result for run in runs])
    if not any(r.ok for r in analysis.results):  # nothing to return: a bad input, a file that cannot run
        raise AnalysisError(analysis)
    return analysis


@dataclass
class _Run:
    result: pipeline.WorkloadResult
    per_op: list
    validation: list[ValidationRow]
    ir: str


def _run(path: Path, hardware_names: Sequence[str], specs: Sequence[Any], cache_dir: Path | None,
         options: dict[str, Any], live: str | None) -> _Run:
    from solar_assets.ir.printer import format_program

    keep: dict[str, Any] = {}
    result = pipeline.analyze_workload(path, hardware_names, cache_dir=cache_dir, keep=keep, **options)
    if live is not None:  # name the object, not the temporary file that stood for it
        result.path = live
        result.rows = [r.model_copy(update={"source": live}) for r in result.rows]
        if result.error:
            result.error = result.error.replace(str(path), live)
            if result.failed_stage == "size":  # the advice about module constants is a file's
                result.error += ("; a live object is validated at its own size: give smaller inputs, or a "
                                 "larger validation_budget=solar_assets.golden.ValidationBudget(...)")
    validated = keep.get("validated")
    per_op = [r for hw in specs if hw.name in keep.get("bounds", {})
              for r in per_op_rows(result.workload, keep["graph"], keep["bounds"][hw.name], hw.name)] if result.ok else []
    checks = validated.result if validated is not None else keep.get("failed_validation")
    validation = [ValidationRow(result.workload, c.name, c.reference, c.dtype, tuple(c.shape), float(c.max_abs_error),
                                float(c.max_rel_error), float(c.tolerance_abs), bool(c.ok), c.message)
                  for c in (checks.checks if checks is not None else [])]
    ir = format_program(validated.program) if validated is not None else ""
    return _Run(result, per_op, validation, ir)
