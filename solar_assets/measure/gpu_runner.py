"""Time workload files on a GPU (or the CPU) with nothing but PyTorch (and JAX where installed).

GPU machines often have only the framework, so this one file imports the standard library and
torch (jax only for JAX workloads), never Dagster, Pyomo, pydantic, pandas or any other solar
module: copy it alone to a machine and run it there. ``solar headroom`` joins the file it writes
with the bounds ``solar analyze --json`` wrote on any machine (``solar_assets/measure/join.py``)::

    python gpu_runner.py --bounds bounds.json --out meas.json FILES...     # copied alone
    python -m solar_assets.measure.gpu_runner --out meas.json FILES...     # in a checkout

Workloads are loaded as KernelBench writes them, unchanged: ``class Model(nn.Module)``,
``get_inputs()``, ``get_init_inputs()`` (torch seeded with 0 before the model is built and with
1 before the inputs are drawn, as solar's loader does); ``model.to(device)`` and every tensor
input ``.to(device)``, in the dtype the file gives. A JAX file defines ``get_inputs()`` and either
``forward(*inputs)`` or a Flax ``class Model`` (linen or nnx) with ``get_init_inputs()``, as
``solar_assets/workloads/jax_loader.py`` defines them; its inputs and parameters are put on the
JAX default device.

Backends (``--backends``, in this order by default): ``torch_eager``, ``torch_compile``
(``torch.compile(mode="default")``), ``torch_compile_max_autotune`` (``mode="max-autotune"``) for
PyTorch files; ``jax_jit`` for JAX files. Each is skipped, with the reason recorded, when it fails
or when its compile and warm-up pass the per-backend budget (``--backend-budget-s``); pairs left
when the whole run passes ``--deadline-s`` are skipped as "deadline". The run is backend-major
(every workload eagerly first, then compiled), so a deadline costs the slow compiled backends,
never the eager column, and the file is rewritten after every pair, so a killed run keeps what
it measured.

One timed run: flush the L2 (or CPU caches): write a buffer of at least twice their size, wait
for the device; then time one call: CUDA events around it on a GPU (then synchronise),
``time.perf_counter`` and a synchronise on the CPU. ``--warmup`` calls first (flushed too), then
``--runs`` timed ones (fewer only when the warm-up says they would pass the budget, never fewer
than ``--min-runs``; the count is recorded). Recorded per backend: every run, the median, p10,
p90 and fastest run (the violation audit compares the fastest with a lower bound: noise only
makes runs slower). The device's name, SM and memory clocks, driver, CUDA, torch / jax versions,
TF32 settings and the date are recorded once.

Measurement file (``schema`` ``solar.gpu_measurement.v1``; fields are added, never renamed)::

    {"schema": "solar.gpu_measurement.v1", "created": "2026-12-01T12:00:00Z",
     "runner": {"argv": [...], "runs": 50, "warmup": 5, "min_runs": 10, "backend_budget_s": 60.0,
                "deadline_s": null, "backends": [...], "flush_bytes": 209715200, "wall_s": 12.3},
     "bounds": {"path": "bounds.json", "sha256": "..."} | null,
     "device": {"kind": "cuda" | "cpu", "hardware": "H200" | "host" | null, "name": "NVIDIA H200",
                "index": 0, "capability": "9.0", "sm_count": 132, "memory_bytes": ...,
                "l2_bytes": 52428800, "driver": "550.54.15", "cuda": "12.4", "cudnn": 90100,
                "clocks_before": {...nvidia-smi fields...}, "clocks_after": {...}, "cpu": "...", "host": "..."},
     "software": {"python": "3.11.7", "torch": "2.13.0", "triton": "...", "jax": "..." | null, ...},
     "settings": {"matmul_allow_tf32": false, "cudnn_allow_tf32": true, "float32_matmul_precision": "highest"},
     "workloads": [
       {"workload": "19_ReLU", "path": "level1/19_ReLU.py", "sha256": "...", "framework": "torch",
        "dtypes": ["float32"], "load_s": 0.8, "error": null,
        "timings": [{"backend": "torch_eager", "label": "torch eager", "status": "ok" | "skipped" | "failed",
                     "reason": "", "runs": 50, "warmup": 5, "times_s": [...], "median_s": ..., "p10_s": ...,
                     "p90_s": ..., "min_s": ..., "first_call_s": ..., "flush_bytes": ..., "timer": "cuda_events"}]}]}

``workload`` is the file stem: the ``workload`` field of the bounds rows it joins with. A
workload that cannot be loaded keeps its entry with ``error`` set and no timings; one backend's
failure never stops the others.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import gc
import hashlib
import importlib.util
import json
import logging
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

logger = logging.getLogger("gpu_runner")

SCHEMA = "solar.gpu_measurement.v1"
TORCH_BACKENDS = ("torch_eager", "torch_compile", "torch_compile_max_autotune")
JAX_BACKENDS = ("jax_jit",)
BACKENDS = TORCH_BACKENDS + JAX_BACKENDS
LABELS = {"torch_eager": "torch eager", "torch_compile": "torch.compile",
          "torch_compile_max_autotune": "torch.compile max-autotune", "jax_jit": "jax.jit"}
COMPILE_MODES = {"torch_compile": "default", "torch_compile_max_autotune": "max-autotune"}
SEED = 0
MIN_FLUSH_BYTES = 16 * 2**20
UNKNOWN_L2_FLUSH_BYTES = 512 * 2**20  # more than twice any GPU's L2 today (B200: 126 MB)
NVIDIA_SMI_FIELDS = ("name", "driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem",
                     "clocks.applications.graphics", "power.limit", "pstate", "temperature.gpu")


class RunnerError(Exception):
    """A workload or option the runner cannot use; the message names the file and the problem."""


class BudgetExceeded(Exception):
    """A backend's compile and warm-up passed its time budget."""


# ---------------------------------------------------------------------------- records
@dataclass
class BackendTiming:
    """One backend's runs of one workload, in seconds (``status`` ok, skipped or failed)."""

    backend: str
    label: str
    status: str = "ok"
    reason: str = ""
    runs: int = 0
    warmup: int = 0
    times_s: list[float] = field(default_factory=list)
    median_s: float | None = None
    p10_s: float | None = None
    p90_s: float | None = None
    min_s: float | None = None
    first_call_s: float | None = None  # the first warm-up call: compilation included where there is one
    flush_bytes: int = 0
    timer: str = ""

    @classmethod
    def skipped(cls, backend: str, reason: str, status: str = "skipped") -> BackendTiming:
        return cls(backend, LABELS.get(backend, backend), status=status, reason=reason)


@dataclass
class WorkloadRecord:
    workload: str
    path: str
    sha256: str
    framework: str
    dtypes: list[str] = field(default_factory=list)
    load_s: float | None = None
    error: str | None = None
    timings: list[BackendTiming] = field(default_factory=list)
    per_op_trace: str | None = None  # --per-op-traces: the Chrome trace of its eager run, or why there is none


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1), linear between the sorted values (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summarise(timing: BackendTiming) -> BackendTiming:
    """Fill the statistics from ``times_s``."""
    t = timing.times_s
    timing.runs = len(t)
    timing.median_s = statistics.median(t)
    timing.p10_s, timing.p90_s = quantile(t, 0.1), quantile(t, 0.9)
    timing.min_s = min(t)
    return timing


# ---------------------------------------------------------------------------- device and cache flush
def cpu_cache_bytes(root: Path = Path("/sys/devices/system/cpu")) -> int:
    """Sum of the host's data / unified caches, each shared cache once (0 if unknown). The same
    idea as solar_assets/measure/flush.py, without importing solar."""
    seen: dict[tuple[str, str], int] = {}
    for index in root.glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            kind = (index / "type").read_text().strip()
            if kind not in ("Data", "Unified"):
                continue
            size = _parse_size((index / "size").read_text().strip())
            key = ((index / "level").read_text().strip(), (index / "shared_cpu_list").read_text().strip())
        except (OSError, ValueError):
            continue
        seen[key] = size
    return sum(seen.values())


def _parse_size(text: str) -> int:
    """'32K' -> 32768; '1024' -> 1024."""
    match = re.fullmatch(r"(\d+)\s*([KMG]?)B?", text, re.IGNORECASE)
    if not match:
        raise ValueError(f"cache size {text!r}")
    return int(match.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match.group(2).upper()]


def l2_bytes(device) -> int | None:
    """The GPU's L2 size from torch's device properties, None where torch does not say."""
    import torch

    size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", None)
    return int(size) if size else None


class Flusher:
    """Write a buffer of at least twice the L2 (GPU) or the caches (CPU) between runs, so a run
    finds its inputs and weights in DRAM, as the bounds assume."""

    def __init__(self, device, nbytes: int | None = None):
        import torch

        self.device = device
        if nbytes is None:
            if device.type == "cuda":
                l2 = l2_bytes(device)
                nbytes = max(2 * l2, MIN_FLUSH_BYTES) if l2 else UNKNOWN_L2_FLUSH_BYTES
            else:
                nbytes = max(2 * cpu_cache_bytes(), MIN_FLUSH_BYTES)
        if nbytes < 8:
            raise RunnerError(f"flush buffer of {nbytes} bytes is too small")
        self.nbytes = int(nbytes)
        # float64 elements: `add_` reads and writes every line with ordinary stores (a memset may
        # bypass the cache); on the GPU the L2 is write-back, so writing evicts as well
        self._buffer = torch.zeros(self.nbytes // 8, dtype=torch.float64, device=device)

    def __call__(self) -> None:
        self._buffer.add_(1.0)
        synchronize(self.device)


def synchronize(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def nvidia_smi(index: int = 0, fields: Sequence[str] = NVIDIA_SMI_FIELDS) -> dict[str, str]:
    """Clocks, driver and power state from ``nvidia-smi`` ({} where it is missing or fails). A
    driver that refuses one of the fields refuses the whole query: then the first five again."""
    try:
        out = subprocess.run(["nvidia-smi", f"--id={index}", f"--query-gpu={','.join(fields)}",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return nvidia_smi(index, fields[:5]) if len(fields) > 5 else {}
    values = [v.strip() for v in out.stdout.strip().splitlines()[0].split(",")] if out.stdout.strip() else []
    return dict(zip(fields, values))


# device-name words -> solar's spec name (hardware/NAME.yaml); checked in order, first match wins
KNOWN_GPUS = (("H200", "H200"), ("H100 PCIe", "H100_PCIe"), ("H100", "H100_SXM"), ("B200", "B200"),
              ("A6000", "A6000"), ("Thor", "Jetson_AGX_Thor"))


def guess_hardware(device_name: str) -> str | None:
    """The spec a GPU's name points to (``NVIDIA H200`` -> ``H200``), None when none does: then
    ``solar headroom --hardware`` must say."""
    for words, spec in KNOWN_GPUS:
        if all(w.lower() in device_name.lower() for w in words.split()):
            return spec
    return None


def describe_device(device, hardware: str | None) -> dict[str, object]:
    import torch

    info: dict[str, object] = {"kind": device.type, "hardware": hardware or ("host" if device.type == "cpu" else None),
                               "cpu": platform.processor() or platform.machine(), "host": platform.node()}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        smi = nvidia_smi(device.index or 0)
        info.update({"name": props.name, "index": device.index or 0, "capability": f"{props.major}.{props.minor}",
                     "sm_count": props.multi_processor_count, "memory_bytes": props.total_memory,
                     "l2_bytes": l2_bytes(device), "driver": smi.get("driver_version"),
                     "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
                     "clocks_before": smi})
        info["hardware"] = hardware or guess_hardware(props.name)
    else:
        info.update({"name": info["cpu"], "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                     else os.cpu_count(), "cache_bytes": cpu_cache_bytes()})
    return info


def describe_software() -> dict[str, str | None]:
    import torch

    out: dict[str, str | None] = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("triton", "numpy", "jax", "jaxlib", "flax"):
        module = sys.modules.get(name)
        version = getattr(module, "__version__", None) if module else None
        if version is None:
            with contextlib.suppress(Exception):
                from importlib import metadata

                version = metadata.version(name)
        out[name] = version
    if "jax" in sys.modules:  # a JAX workload ran: on which device
        with contextlib.suppress(Exception):
            out["jax_device"] = str(sys.modules["jax"].devices()[0].device_kind)
    return out


def describe_settings() -> dict[str, object]:
    """The fp32 math the run used: left at the framework's defaults (the bounds' ``--fp32-math
    auto`` assumes them), recorded so a reader can check."""
    import torch

    return {"matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "grad": "no_grad"}


# ---------------------------------------------------------------------------- loading workloads
def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def detect_framework(text: str) -> str:
    """``jax`` when the file imports jax or flax and not torch, else ``torch``."""
    imports = set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", text, re.MULTILINE))
    return "jax" if imports & {"jax", "flax"} and "torch" not in imports else "torch"


def exec_module(path: Path) -> types.ModuleType:
    """Run the file as a fresh module (its folder first on sys.path, as ``python file.py`` does)."""
    name = "gpu_runner_workload_" + re.sub(r"\W", "_", path.stem) + "_" + file_sha256(path)[:8]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RunnerError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Flax modules are dataclasses: dataclasses looks the module up
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise RunnerError(f"{path}: executing the file failed: {type(e).__name__}: {e}") from e
    finally:
        sys.modules.pop(name, None)
        with contextlib.suppress(ValueError):
            sys.path.remove(str(path.resolve().parent))
    return module


def _to_device(value, device):
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(v, device) for v in value)
    return value


def _dtypes(values) -> list[str]:
    import torch

    found: list[str] = []
    for v in values:
        if isinstance(v, torch.Tensor) and str(v.dtype).removeprefix("torch.") not in found:
            found.append(str(v.dtype).removeprefix("torch."))
    return found


@dataclass
class Loaded:
    """A workload ready to call: ``call()`` runs it once (results left on the device)."""

    fn: Callable[[], object]
    dtypes: list[str]
    release: Callable[[], None] = lambda: None


def load_torch(path: Path, device, backend: str) -> Loaded:
    import torch

    module = exec_module(path)
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise RunnerError(f"{path}: missing {', '.join(missing)}; a workload defines class Model(nn.Module), "
                          "get_inputs() and get_init_inputs()")
    try:
        torch.manual_seed(SEED)
        model = module.Model(*module.get_init_inputs())
        torch.manual_seed(SEED + 1)
        inputs = list(module.get_inputs())
    except Exception as e:
        raise RunnerError(f"{path}: building the model or its inputs failed: {type(e).__name__}: {e}") from e
    if not isinstance(model, torch.nn.Module):
        raise RunnerError(f"{path}: Model(...) is a {type(model).__name__}, not a torch.nn.Module")
    model = model.eval().to(device)
    inputs = [_to_device(x, device) for x in inputs]
    dtypes = _dtypes([*inputs, *model.parameters()])
    fn = torch.compile(model, mode=COMPILE_MODES[backend]) if backend in COMPILE_MODES else model

    def call() -> object:
        with torch.no_grad():
            return fn(*inputs)

    def release() -> None:
        nonlocal model, inputs, fn
        model = inputs = fn = None
        if backend in COMPILE_MODES:
            torch._dynamo.reset()
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()

    return Loaded(call, dtypes, release)


def load_jax(path: Path, backend: str) -> Loaded:
    """As solar_assets/workloads/jax_loader.py: ``forward(*inputs)``, or a Flax linen / nnx
    ``Model(*get_init_inputs())`` with parameters from ``jax.random.key(SEED)``."""
    import jax

    module = exec_module(path)
    if not hasattr(module, "get_inputs"):
        raise RunnerError(f"{path}: missing get_inputs()")
    inputs = [jax.device_put(x) for x in module.get_inputs()]
    model_cls = getattr(module, "Model", None)
    if model_cls is None:
        forward = getattr(module, "forward", None)
        if not callable(forward):
            raise RunnerError(f"{path}: missing forward(*inputs) or a Flax class Model")
        fn, state = (lambda state, *xs: forward(*xs)), None
    else:
        from flax import linen, nnx

        if isinstance(model_cls, type) and issubclass(model_cls, linen.Module):
            model = model_cls(*module.get_init_inputs())
            state = model.init(jax.random.key(SEED), *inputs)
            fn = lambda state, *xs: model.apply(state, *xs)  # noqa: E731
        elif isinstance(model_cls, type) and issubclass(model_cls, nnx.Module):
            graphdef, state = nnx.split(model_cls(*module.get_init_inputs(), rngs=nnx.Rngs(SEED)))
            fn = lambda state, *xs: nnx.merge(graphdef, state)(*xs)  # noqa: E731
        else:
            raise RunnerError(f"{path}: Model is not a Flax module (flax.linen.Module or flax.nnx.Module)")
    jitted = jax.jit(fn)
    dtypes = sorted({str(x.dtype) for x in inputs if hasattr(x, "dtype")})

    def call() -> object:
        return jax.block_until_ready(jitted(state, *inputs))

    return Loaded(call, dtypes)


# ---------------------------------------------------------------------------- timing
@contextlib.contextmanager
def time_limit(seconds: float | None, what: str) -> Iterator[None]:
    """Raise ``BudgetExceeded`` in this (main) thread after ``seconds`` (SIGALRM; a soft limit:
    it lands when the interpreter next runs Python code). No limit off the main thread."""
    if not seconds or not hasattr(signal, "SIGALRM") or not threading_main():
        yield
        return

    def expire(_signum, _frame):
        raise BudgetExceeded(f"{what} passed its budget of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


class Timer:
    """CUDA events around one call on a GPU; perf_counter and a synchronise on the CPU."""

    def __init__(self, device):
        import torch

        self.device = device  # None: the call blocks until done itself (jax.block_until_ready)
        self.name = {"cuda": "cuda_events", "cpu": "perf_counter"}.get(getattr(device, "type", None),
                                                                        "perf_counter_blocking_call")
        self._torch = torch

    def __call__(self, fn: Callable[[], object]) -> float:
        if self.device is not None and self.device.type == "cuda":
            start = self._torch.cuda.Event(enable_timing=True)
            end = self._torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        begin = time.perf_counter()
        fn()
        if self.device is not None:
            synchronize(self.device)
        return time.perf_counter() - begin


@dataclass(frozen=True)
class Options:
    runs: int = 50
    warmup: int = 5
    min_runs: int = 10
    backend_budget_s: float = 60.0
    deadline_s: float | None = None
    flush_bytes: int | None = None
    per_op_dir: Path | None = None  # --per-op-traces: a torch.profiler trace of each eager run here
    per_op_iterations: int = 10

    def __post_init__(self) -> None:
        if self.per_op_iterations < 1:
            raise RunnerError(f"bad options: --per-op-iterations {self.per_op_iterations} (≥ 1)")
        if self.runs < 1 or self.warmup < 1 or self.min_runs < 1 or not self.backend_budget_s > 0:
            raise RunnerError(f"bad options: runs {self.runs}, warmup {self.warmup} (≥ 1 each), min-runs "
                              f"{self.min_runs}, backend budget {self.backend_budget_s} s (> 0)")


def time_backend(loaded: Loaded, backend: str, options: Options, flush: Flusher, timer: Timer) -> BackendTiming:
    """Warm up (flushed, under the budget), then the timed runs, each after a flush."""
    timing = BackendTiming(backend, LABELS[backend], warmup=options.warmup, flush_bytes=flush.nbytes,
                           timer=timer.name)
    started = time.perf_counter()
    what = f"{LABELS[backend]} compile and warm-up"
    try:
        with time_limit(options.backend_budget_s, what):
            calls = []
            for _ in range(options.warmup):
                flush()
                calls.append(timer(loaded.fn))
    except BudgetExceeded:
        raise
    except Exception as e:  # torch.compile wraps what it caught (the alarm included) in its own errors
        if time.perf_counter() - started >= options.backend_budget_s:
            raise BudgetExceeded(f"{what} passed its budget of {options.backend_budget_s:g} s") from e
        raise
    # a compiler may catch the alarm and finish the warm-up another way: the budget passed all the same
    if time.perf_counter() - started >= options.backend_budget_s:
        raise BudgetExceeded(f"{what} passed its budget of {options.backend_budget_s:g} s")
    timing.first_call_s = calls[0]
    left = options.backend_budget_s - (time.perf_counter() - started)
    per_run = min(calls[1:] or calls) + flush_seconds(flush, timer)
    runs = options.runs
    if per_run * runs > left:  # the budget says fewer; never fewer than min_runs
        runs = max(options.min_runs, int(left / per_run) if per_run > 0 else runs)
        runs = min(runs, options.runs)
    for _ in range(runs):
        flush()
        timing.times_s.append(timer(loaded.fn))
    if runs < options.runs:
        timing.reason = f"{runs} of {options.runs} runs: the warm-up said more would pass the budget"
    return summarise(timing)


def flush_seconds(flush: Flusher, timer: Timer) -> float:
    return timer(flush)


# ---------------------------------------------------------------------------- the run
def backends_for(framework: str, asked: Sequence[str]) -> list[str]:
    own = TORCH_BACKENDS if framework == "torch" else JAX_BACKENDS
    return [b for b in asked if b in own]


def measure(paths: Sequence[Path], device_name: str = "auto", backends: Sequence[str] = BACKENDS,
            options: Options | None = None, out: Path | None = None, hardware: str | None = None,
            bounds: Path | None = None, argv: Sequence[str] = ()) -> dict:
    """Time every workload with every backend that applies; the measurement document (written to
    ``out`` after every workload × backend when given)."""
    import torch

    options = options or Options()
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise RunnerError(f"unknown backend(s) {', '.join(unknown)}; known: {', '.join(BACKENDS)}")
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if device_name == "auto" else device_name)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    began = time.perf_counter()
    flush = Flusher(device, options.flush_bytes)
    timer = Timer(device)
    doc: dict = {
        "schema": SCHEMA,
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "runner": {"argv": list(argv), **asdict(options), "backends": list(backends), "flush_bytes": flush.nbytes},
        "bounds": {"path": str(bounds), "sha256": file_sha256(bounds)} if bounds else None,
        "device": describe_device(device, hardware),
        "software": {},
        "settings": describe_settings(),
        "workloads": [],
    }
    records: list[WorkloadRecord] = []
    sources: list[tuple[Path, str]] = []
    for path in paths:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            records.append(WorkloadRecord(path.stem, str(path), "", "", error=f"{path}: cannot read: {e}"))
            sources.append((path, ""))
            continue
        framework = detect_framework(text)
        records.append(WorkloadRecord(path.stem, str(path), hashlib.sha256(text.encode()).hexdigest(), framework))
        sources.append((path, framework))
    doc["workloads"] = records

    def save() -> None:
        if out is not None:
            write_document(doc, out)

    for backend in backends:  # backend-major: a deadline costs the compiled backends, not eager
        for record, (path, framework) in zip(records, sources):
            if not framework or backend not in backends_for(framework, backends):
                continue
            if record.error:  # the file did not load for an earlier backend: it will not now
                record.timings.append(BackendTiming.skipped(backend, "not loaded (see the workload's error)",
                                                            status="failed"))
                continue
            if options.deadline_s is not None and time.perf_counter() - began > options.deadline_s:
                record.timings.append(BackendTiming.skipped(backend, f"deadline: the run passed "
                                                                     f"--deadline-s {options.deadline_s:g}"))
                continue
            record.timings.append(_measure_one(record, path, framework, backend, device, options, flush, timer))
            doc["software"] = describe_software()
            save()
            logger.info("%s %s: %s", record.workload, LABELS[backend], _summary(record.timings[-1]))
    if device.type == "cuda":
        doc["device"]["clocks_after"] = nvidia_smi(device.index or 0)
    doc["software"] = describe_software()
    doc["runner"]["wall_s"] = round(time.perf_counter() - began, 3)
    save()
    return as_plain(doc)


def _measure_one(record: WorkloadRecord, path: Path, framework: str, backend: str, device, options: Options,
                 flush: Flusher, timer: Timer) -> BackendTiming:
    loaded = None
    try:
        started = time.perf_counter()
        loaded = load_torch(path, device, backend) if framework == "torch" else load_jax(path, backend)
        record.load_s = round(time.perf_counter() - started, 3)
        record.dtypes = record.dtypes or loaded.dtypes
        if framework == "jax":  # XLA's stream is not torch's: time the blocking call on the host clock
            timer = Timer(None)
        timing = time_backend(loaded, backend, options, flush, timer)
        if options.per_op_dir is not None and backend == "torch_eager":
            record.per_op_trace = record_trace(loaded, flush, device, Path(options.per_op_dir) / f"{path.stem}.json",
                                               options.per_op_iterations)
        return timing
    except BudgetExceeded as e:
        return BackendTiming.skipped(backend, f"{path}: {e}")
    except RunnerError as e:  # the file itself: its Model, inputs or module code
        record.error = str(e)
        return BackendTiming.skipped(backend, str(e), status="failed")
    except Exception as e:  # a framework failure (torch.compile, OOM) must not stop the others
        logger.debug("%s: %s failed", path, backend, exc_info=True)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return BackendTiming.skipped(backend, f"{path}: {LABELS[backend]} failed: {type(e).__name__}: {first}"[:500],
                                     status="failed")
    finally:
        if loaded is not None:
            with contextlib.suppress(Exception):
                loaded.release()


ITERATION = "solar.iteration"  # the annotation solar_assets/measure/op_profile.py splits iterations by


def record_trace(loaded: Loaded, flush: Flusher, device, out: Path, iterations: int) -> str:
    """The eager run under torch.profiler (CPU and, on a GPU, CUDA activity: each kernel linked to
    the op that launched it), ``iterations`` times, each flushed first and annotated
    ``solar.iteration``; exported as a Chrome trace for ``solar headroom --profile``. Returns its
    path, or why there is none (a profiler failure must not cost the timings)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    try:
        with profile(activities=activities) as prof:
            for _ in range(iterations):
                flush()
                with record_function(ITERATION):
                    loaded.fn()
                    synchronize(device)
        out.parent.mkdir(parents=True, exist_ok=True)
        prof.export_chrome_trace(str(out))
        return str(out)
    except Exception as e:  # noqa: BLE001 - recorded, the timings stand
        return f"no trace: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


def _summary(t: BackendTiming) -> str:
    if t.status != "ok":
        return f"{t.status}: {t.reason}"
    return f"median {t.median_s * 1e3:.4g} ms (p10 {t.p10_s * 1e3:.4g}, p90 {t.p90_s * 1e3:.4g}, {t.runs} runs)"


def as_plain(value):
    """Dataclasses to dicts, recursively (the JSON document)."""
    if hasattr(value, "__dataclass_fields__"):
        return {k: as_plain(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def write_document(doc: dict, out: Path) -> None:
    """Atomically: a killed run leaves the previous complete file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(as_plain(doc), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out)


def workloads_from_bounds(bounds: Path) -> list[Path]:
    """The workload files a bounds file names (its rows' ``source``), each once: as written,
    else relative to the bounds file's folder, else by file name beside it."""
    data = json.loads(bounds.read_text(encoding="utf-8"))
    rows = data if isinstance(data, list) else data.get("rows", []) if isinstance(data, dict) else []
    found: dict[str, Path] = {}
    for row in rows:
        source = Path(str(row.get("source", "")))
        for candidate in (source, bounds.parent / source, bounds.parent / source.name):
            if candidate.is_file():
                found.setdefault(str(candidate.resolve()), candidate)
                break
        else:
            raise RunnerError(f"{bounds}: workload file {source} (row {row.get('workload')!r}) not found; "
                              "give the files on the command line")
    return list(found.values())


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpu_runner", description="Time workload files (KernelBench convention) "
                                "with torch eager / torch.compile / jax.jit; write a measurement JSON.")
    p.add_argument("files", nargs="*", type=Path, metavar="FILE", help="workload files (default: the bounds' rows)")
    p.add_argument("--bounds", type=Path, help="the bounds file (`solar analyze --json`): its digest is recorded, "
                   "and its workloads are measured when no FILE is given")
    p.add_argument("--out", type=Path, required=True, help="the measurement file to write")
    p.add_argument("--device", default="auto", help="cuda, cuda:1, cpu (default: cuda when there is one)")
    p.add_argument("--hardware", help="the hardware spec name the bounds use for this device (e.g. H200; "
                   "default host on the CPU)")
    p.add_argument("--backends", default=",".join(BACKENDS), help=f"comma-separated, of {', '.join(BACKENDS)}")
    p.add_argument("--runs", type=int, default=Options.runs)
    p.add_argument("--warmup", type=int, default=Options.warmup)
    p.add_argument("--min-runs", type=int, default=Options.min_runs)
    p.add_argument("--backend-budget-s", type=float, default=Options.backend_budget_s,
                   help="per workload and backend: compile + warm-up limit, and the timed runs' target")
    p.add_argument("--deadline-s", type=float, help="skip what is left once the whole run passes this")
    p.add_argument("--flush-bytes", type=int, help="flush buffer size (default 2 × L2, or 2 × the CPU caches)")
    p.add_argument("--per-op-traces", type=Path, metavar="DIR",
                   help="also profile each PyTorch file's eager run (torch.profiler, CUDA kernels attributed to their "
                        "ops) and write DIR/<stem>.json, for `solar headroom --profile DIR/<stem>.json FILE`")
    p.add_argument("--per-op-iterations", type=int, default=Options.per_op_iterations,
                   help="profiled iterations per file with --per-op-traces (default %(default)s)")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s")
    try:
        files = list(args.files) or (workloads_from_bounds(args.bounds) if args.bounds else [])
        if not files:
            raise RunnerError("no workload files: give FILE... or --bounds with rows")
        options = Options(args.runs, args.warmup, min(args.min_runs, args.runs), args.backend_budget_s,
                          args.deadline_s, args.flush_bytes, args.per_op_traces, args.per_op_iterations)
        backends = [b.strip() for b in args.backends.split(",") if b.strip()]
        doc = measure(files, args.device, backends, options, args.out, args.hardware, args.bounds, argv)
    except RunnerError as e:
        print(f"gpu_runner: error: {e}", file=sys.stderr)
        return 2
    ok = sum(t["status"] == "ok" for w in doc["workloads"] for t in w["timings"])
    total = sum(len(w["timings"]) for w in doc["workloads"])
    print(f"gpu_runner: {ok}/{total} workload × backend timings on {doc['device'].get('name')}; wrote {args.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
