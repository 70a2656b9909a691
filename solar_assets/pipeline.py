"""One workload through every stage, as plain Python: the assets, the CLI and the bench share it.

Each stage is one small function over the stage packages' plain data (``read_source``,
``translate_source``, ``validation_size_for``, ``golden_for``, ``validate_translation``,
``lift_graph``, ``bound_graph``, ``inverse_for``); the Dagster assets call the same functions,
so the two paths cannot drift. ``analyze_workload`` chains them and never raises on bad input:
a workload that fails any stage comes back with ``error`` naming the file and the problem.

Analysis happens at the file's own size; validation at the *validation size*: the same where
it is cheap, else the file's size constants scaled down (``solar_assets.golden.sizing``), with
the IR traced again at that size and checked to have the full-size IR's structure.

The validation verdict gates everything downstream: an IR that does not reproduce the
golden outputs gets no bounds (``ValidationFailed``), because a bound of a wrong program
bounds nothing.
"""
from __future__ import annotations

import contextlib
import functools
import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ir_schemas import ReportRow
from solar_assets import cache_store
from solar_assets.errors import SolarError

if TYPE_CHECKING:  # the stage packages import torch / numba / pyomo: load them when used
    from ir_schemas import Program
    from solar_assets.golden import Golden, ValidationBudget, ValidationSize
    from solar_assets.hardware import HardwareSpec
    from solar_assets.measure import MeasureOptions
    from solar_assets.translate import Translation
    from solar_assets.workloads import WorkloadSource

logger = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HARDWARE = ("H100_SXM",)
# Stage names as timed and shown in progress lines, in pipeline order.
STAGES = ("trace", "size", "golden", "validate", "graph", "bounds", "cache_aware")
TRACE_PACKAGES = ("solar_assets.translate", "solar_assets.ir", "ir_schemas", "solar_assets.workloads")
GOLDEN_PACKAGES = ("solar_assets.golden", "solar_assets.workloads", "solar_assets.ir")


class ValidationFailed(SolarError):
    """The IR did not reproduce the golden outputs; the message names the file and the output."""

    def __init__(self, message: str, result: Any = None):
        super().__init__(message)
        self.result = result  # the ValidationResult, for its per-output table


# ---------------------------------------------------------------------------- where things live
def solar_home(override: str | Path | None = None) -> Path:
    """``override``, else ``$SOLAR_HOME``, else ``<repo>/data/solar_home``."""
    if override is not None:
        return Path(override).expanduser().resolve()
    env = os.environ.get("SOLAR_HOME")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / "data" / "solar_home"


def default_cache_dir() -> Path:
    return solar_home() / "cache"


def reports_dir(home: Path | None = None) -> Path:
    return (home or solar_home()) / "reports"


@functools.lru_cache(maxsize=None)
def package_fingerprint(package: str) -> str:
    """Hash of a package's ``.py`` sources, without importing it: a code version that changes
    exactly when the stage's code does (used for Dagster ``code_version`` and cache keys).

    Taken once per process: a process keeps running the code it imported, so a source edited
    while it runs must not give its results the new code's key."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):  # a parent that does not import, or a module without a spec
        spec = None
    if spec is None or not spec.submodule_search_locations:
        origin = spec.origin if spec else None
        files = [Path(origin)] if origin else []
    else:
        files = sorted(f for d in spec.submodule_search_locations for f in Path(d).rglob("*.py"))
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()[:12]


# ---------------------------------------------------------------------------- progress
_listeners: list[Callable[[str, str], None]] = []


@contextlib.contextmanager
def progress_listener(callback: Callable[[str, str], None]) -> Iterator[None]:
    """Call ``callback(workload, stage)`` when a stage starts (in this process, Dagster or not)."""
    _listeners.append(callback)
    try:
        yield
    finally:
        _listeners.remove(callback)


def _starting(workload: str, stage: str) -> None:
    logger.debug("%s: %s", workload, stage)
    for callback in list(_listeners):
        callback(workload, stage)


# ---------------------------------------------------------------------------- stage steps
@dataclass(frozen=True)
class ValidatedIR:
    """An IR program that passed validation, with where it came from and how well it matched.

    ``program`` is the full-size IR (what is analysed); ``validated_program`` the IR that ran, at
    ``validated_size`` ("full", or the rebound constants such as "BATCH=3,DIM=64")."""

    translation: Translation
    result: Any  # solar_assets.validate.ValidationResult
    validated_size: str = "full"
    validated_program: Program | None = None  # None: the full-size program itself

    @property
    def program(self):
        return self.translation.program


def read_source(path: str | Path, framework: str | None = None) -> WorkloadSource:
    """The workload file, hashed, with its framework: ``framework`` ("torch" / "jax"), else
    ``$SOLAR_FRAMEWORK`` (set by ``solar --framework``), else detected from the file."""
    from solar_assets.workloads import read_workload_source

    src = read_workload_source(path, framework or os.environ.get("SOLAR_FRAMEWORK") or None)
    if src.framework not in ("torch", "jax"):
        raise SolarError(f"{src.path}: neither a PyTorch nor a JAX workload (no 'torch', 'jax' or 'flax' import "
                         "found); a PyTorch workload defines class Model(nn.Module), get_inputs() and "
                         "get_init_inputs(), a JAX one get_inputs() and forward(*inputs) or a Flax class Model")
    return src


def golden_for(src: WorkloadSource, cache_dir: Path | None = None,
               size: ValidationSize | Mapping[str, int] | None = None, translator: str | None = None) -> Golden:
    """The workload's golden outputs at its validation size, from ``cache_dir`` when this source and
    code made them before. ``size``: a ``ValidationSize`` or the constants to rebind ({} = full
    size); None chooses it (``validation_size_for`` on ``translator``'s IR, cached)."""
    from solar_assets.golden import load_golden, make_golden, save_golden

    if size is None:
        size = validation_size_for(src, translate_source(src, cache_dir, translator=translator), cache_dir)
    constants = dict(getattr(size, "constants", size))
    _starting(src.name, "golden" if not constants else f"golden at {_label(constants)}")
    cached = _cache_path(cache_dir, "golden", src, GOLDEN_PACKAGES, ".npz", constants)
    hit = load_golden(cached) if cached is not None else None  # None too for a corrupt entry (a warning)
    if hit is not None:
        logger.debug("%s: golden outputs from cache %s", src.name, cached)
        return hit
    if src.framework == "jax":
        from solar_assets.golden.jax_golden import make_jax_golden

        golden = make_jax_golden(src, constants)
    else:
        golden = make_golden(src, constants)
    if cached is not None:
        save_golden(golden, cached)
    return golden


def translate_source(src: WorkloadSource, cache_dir: Path | None = None,
                     constants: Mapping[str, int] | None = None, translator: str | None = None) -> Translation:
    """The workload's IR by ``translator`` ("tracer", "agent" or "auto": see
    ``solar_assets.translate.agent.modes``; None: ``$SOLAR_TRANSLATOR``, set by ``solar
    --translator``, else the tracer), at its own size or with ``constants`` rebound. Cached by
    source hash, constants and translator code; for the agent modes also by model and prompt hash,
    the provenance (attempts, their diagnostics, tokens) kept in the cache file."""
    from solar_assets.translate import Translation, trace_torch

    constants = dict(constants or {})
    translator = translator_choice(translator)
    _starting(src.name, "trace" if not constants else f"trace at {_label(constants)}")
    variant: dict[str, Any] = dict(constants)
    if translator != "tracer":
        variant.update(_agent_variant(translator))
    cached = _cache_path(cache_dir, "ir", src, TRACE_PACKAGES, ".json", variant)
    translation = cache_store.load_json(cached, Translation.from_json)
    if translation is not None:
        logger.debug("%s: IR from cache %s", src.name, cached)
        return translation if translator == "tracer" else dataclasses.replace(translation, from_cache=True)
    if translator != "tracer":
        from solar_assets.translate.agent import translate

        translation = translate(src, translator, constants, cache_dir,
                                golden=lambda: golden_for(src, cache_dir, constants))
    elif src.framework == "jax":
        from solar_assets.translate.jax_tracer import trace_jax

        translation = trace_jax(src, constants or None)
    else:
        translation = trace_torch(src, constants or None)
    cache_store.store_json(cached, translation.to_json())
    return translation


def translator_choice(translator: str | None = None) -> str:
    """``translator``, else ``$SOLAR_TRANSLATOR`` (how ``solar --translator`` reaches the Dagster
    assets and coverage workers), else "tracer"."""
    return translator or os.environ.get("SOLAR_TRANSLATOR", "").strip() or "tracer"


def _agent_variant(translator: str) -> dict[str, Any]:
    """The agent modes' part of the IR cache key: mode, model and prompt hash. Raises
    ``AgentNotConfigured`` for ``agent`` without a model (``auto`` runs as the tracer then)."""
    from solar_assets.translate.agent import TRANSLATORS, agent_settings, prompt_sha256

    if translator not in TRANSLATORS:
        raise SolarError(f"unknown translator {translator!r}; choose one of {', '.join(TRANSLATORS)}")
    settings = agent_settings(required=translator == "agent")
    return {"translator": translator, "model": settings.model_name if settings else None, "prompt": prompt_sha256()}


def validation_size_for(src: WorkloadSource, translation: Translation, cache_dir: Path | None = None,
                        budget: ValidationBudget | None = None) -> ValidationSize:
    """The size to validate at (``solar_assets.golden.sizing.choose_validation_size``): full size
    where its IR is within ``budget``, the file's ``SOLAR_VALIDATION_SIZES`` where it declares one,
    else its constants scaled down. Traces at candidate sizes go through the IR cache; the choice
    is cached by source, code and budget. Raises ``ValidationSizeError`` naming the file."""
    from solar_assets.golden import ValidationBudget, ValidationSize, ValidationSizeError, choose_validation_size

    budget = budget or ValidationBudget()
    _starting(src.name, "size")
    cached = _cache_path(cache_dir, "size", src, (*TRACE_PACKAGES, "solar_assets.golden"), ".json",
                         {"bytes": budget.tensor_bytes, "iterations": budget.iterations,
                          **({"translator": translation.mode} if translation.mode != "tracer" else {})})
    hit = cache_store.load_json(cached, lambda data: str(data["error"]) if "error" in data
                                else ValidationSize.from_json(json.dumps(data)))
    if isinstance(hit, str):  # no size worked, with this source and code: the search is not repeated
        raise ValidationSizeError(hit)
    if hit is not None:
        return hit
    try:
        size = choose_validation_size(src.path, translation.program,
                                      lambda constants: translate_source(src, cache_dir, constants,
                                                                         translation.mode).program, budget)
    except ValidationSizeError as e:
        cache_store.store_json(cached, {"error": str(e)})
        raise
    logger.info("%s: validation size %s (%s)", src.name, size.label, size.reason)
    cache_store.store(cached, size.to_json())
    return size


def validate_translation(src: WorkloadSource, translation: Translation, golden: Golden,
                         cache_dir: Path | None = None) -> ValidatedIR:
    """Run the IR on the golden inputs; raise ``ValidationFailed`` unless every output matches.

    When the golden outputs are at a smaller size (``golden.constants``), the IR is traced again at
    that size, checked to have the structure of ``translation``'s (``ValidationSizeError`` if not),
    and that IR is what runs."""
    from solar_assets.golden import check_same_structure
    from solar_assets.validate import validate_program

    program, small = translation.program, None
    if golden.constants:
        small = translate_source(src, cache_dir, golden.constants, translation.mode).program
        check_same_structure(src.path, translation.program, small, golden.constants)
        program = small
    _starting(src.name, "validate" if small is None else f"validate at {golden.size_label}")
    from solar_assets.validate.verdict_cache import VERDICT_PACKAGES, load_verdict, program_digest, save_verdict

    verdict_path = _cache_path(cache_dir, "verdict", src, VERDICT_PACKAGES, ".json",
                               {**golden.constants, "program": program_digest(program)})
    result = load_verdict(verdict_path)  # an accepted verdict of this very IR, golden and code
    if result is None:
        result = validate_program(program, golden, source=str(src.path))
        save_verdict(verdict_path, result)
    at = "" if small is None else f" at validation size {golden.size_label}"
    if not result.ok:
        raise ValidationFailed(f"{src.path}: the {translation.translator} IR failed validation{at}: "
                               + validation_summary(result), result)
    return ValidatedIR(translation=translation, result=result, validated_size=golden.size_label,
                       validated_program=small)


def validation_summary(result: Any) -> str:
    """The failing outputs, one clause each: ``out0: max abs error 3.1 > 1e-4 (...)``."""
    bad = [c for c in result.checks if not c.ok]
    if not bad:
        return f"max abs error {result.max_abs_error:.3g}, max rel error {result.max_rel_error:.3g}"
    return "; ".join(f"{c.name}: {c.message}" for c in bad)


def lift_graph(src: WorkloadSource, validated: ValidatedIR):
    from solar_assets.graph import build_einsum_graph

    _starting(src.name, "graph")
    return build_einsum_graph(validated.program)


def load_spec(name: str, hardware_dir: str | Path | None = None) -> HardwareSpec:
    from solar_assets.hardware import load_hardware

    return load_hardware(name, hardware_dir) if hardware_dir else load_hardware(name)


def bound_graph(src: WorkloadSource, graph: Any, hw: HardwareSpec, fp32_math: str | None = None):
    """``sol_bounds`` under the fp32-math policy: ``fp32_math``, else ``$SOLAR_FP32_MATH`` (how
    ``solar analyze --fp32-math`` reaches the Dagster assets), else ``auto``."""
    from solar_assets.bounds import sol_bounds

    fp32_math = fp32_math or os.environ.get("SOLAR_FP32_MATH") or "auto"
    _starting(src.name, f"bounds {hw.name}")
    return sol_bounds(graph, hw, fp32_math=fp32_math_of(src, fp32_math))


def fp32_math_of(src: WorkloadSource, policy: str = "auto"):
    """The fp32-math policy for this workload: ``policy``, ``auto`` resolved from the file's settings."""
    from solar_assets.bounds.units import fp32_math_for

    try:
        text = Path(src.path).read_text(encoding="utf-8", errors="replace") if policy == "auto" else ""
    except OSError:
        text = ""  # the frameworks' defaults then
    return fp32_math_for(text, policy)


CACHE_AWARE_PACKAGES = ("solar_assets.bounds.cache_aware", "solar_assets.graph")


def cache_aware_for(src: WorkloadSource, graph: Any, hw: HardwareSpec, cache_dir: Path | None = None):
    """The cache-aware bracket (``CacheAwareOutcome``): the best modelled schedule at ``hw``'s on-chip
    buffer (L2) and the provable lower bound at all its on-chip storage; never raises for
    a solver failure (glpsol missing, infeasible, time limit): the outcome's ``error`` says why and
    the other modes stand. Cached on disk by graph digest, capacity and solver code, so hardware
    sharing a buffer size, and a re-run, reuse the solve."""
    from solar_assets.bounds.cache_aware import CacheAwareOutcome, cache_aware_outcome

    capacity, onchip_total = int(hw.onchip_buffer_bytes), int(hw.onchip_total_bytes)
    _starting(src.name, f"cache-aware {hw.name}")
    cached = _digest_cache_path(cache_dir, "cache_aware", src.name, graph, f"{capacity}:{onchip_total}")
    hit = cache_store.load(cached, lambda data: CacheAwareOutcome.from_json(data.decode()))
    if hit is not None:
        return hit
    outcome = cache_aware_outcome(graph, capacity, lb_capacity_bytes=onchip_total)
    if outcome.error:
        logger.warning("%s: %s", src.path, outcome.error)
    for fault in outcome.ordering_faults():
        logger.error("%s on %s: mode ordering broken: %s", src.path, hw.name, fault)
    if outcome.ok:  # a failure is not cached: glpsol may be installed later
        cache_store.store(cached, outcome.to_json())
    return outcome


def ski_slope_for(src: WorkloadSource, graph: Any, out_dir: Path, marks: Mapping[str, int] | None = None,
                  cache_dir: Path | None = None) -> dict[str, Path]:
    """The workload's ski-slope (minimum DRAM traffic against buffer capacity, 64 KiB to 1 GiB) as
    ``<out_dir>/<workload>.csv`` and ``.png``, with ``marks`` (hardware name -> buffer bytes) drawn."""
    from solar_assets.bounds.cache_aware import SkiSlope, SkiSlopeRow, ski_slope

    _starting(src.name, "ski-slope")
    cached = _digest_cache_path(cache_dir, "skislope", src.name, graph, "sweep")
    slope = cache_store.load_json(cached, lambda rows: SkiSlope(src.name, tuple(SkiSlopeRow(**r) for r in rows)))
    if slope is None:
        slope = ski_slope(graph)
        slope = SkiSlope(src.name, slope.rows)
        cache_store.store_json(cached, [r.__dict__ for r in slope.rows])
    out_dir = Path(out_dir)
    return {"csv": slope.write_csv(out_dir / f"{src.name}.csv"),
            "png": slope.write_png(out_dir / f"{src.name}.png", marks)}


def _digest_cache_path(cache_dir: Path | None, kind: str, name: str, graph: Any, variant: str) -> Path | None:
    if cache_dir is None:
        return None
    code = ":".join(package_fingerprint(p) for p in CACHE_AWARE_PACKAGES)
    key = hashlib.sha256(f"{graph.digest()}:{code}:{variant}".encode()).hexdigest()
    return Path(cache_dir) / kind / f"{_file_safe(name)}-{key[:16]}.json"


def inverse_for(src: WorkloadSource, graph: Any, hw: HardwareSpec, target_latency_s: float | None,
                bounds: Any = None):
    """The inverse roofline at ``target_latency_s`` (None when no target was asked for)."""
    if target_latency_s is None:
        return None
    if not target_latency_s > 0:
        raise SolarError(f"target latency must be positive seconds, got {target_latency_s!r}")
    from solar_assets.bounds import inverse_roofline

    bounds = bounds if bounds is not None else bound_graph(src, graph, hw)  # the row's peaks and fp32 policy
    _starting(src.name, f"inverse roofline {hw.name}")
    return inverse_roofline(bounds, target_latency_s)


def _cache_path(cache_dir: Path | None, kind: str, src: WorkloadSource, packages: tuple[str, ...],
                suffix: str, variant: Mapping[str, int] | None = None) -> Path | None:
    """A cache file keyed by everything the result depends on: the source's hash, the local
    modules it imports (``src.local_sha256``: a helper beside it, or on a path it adds), its
    framework, the producing packages' sources, the framework's version and ``variant`` (the
    rebound constants, translator options, or the budget). The process-wide state a file could
    change (torch's default dtype, the working directory) is not in the key: ``solar analyze``
    runs each file in a worker that restores it (``solar_assets.workers.state``)."""
    if cache_dir is None:
        return None
    code = ":".join(package_fingerprint(p) for p in packages)
    extra = json.dumps(dict(variant or {}), sort_keys=True)
    versions = _jax_versions() if src.framework == "jax" else _torch_version()
    local = getattr(src, "local_sha256", "")  # a WorkloadSource pickled before the field existed
    key = hashlib.sha256(f"{src.sha256}:{local}:{src.framework}:{code}:{versions}:{extra}".encode()).hexdigest()
    return Path(cache_dir) / kind / f"{_file_safe(src.name)}-{key[:16]}{suffix}"


def _file_safe(name: str) -> str:
    """A workload name as a file-name part: path separators and backslashes replaced."""
    return name.replace("/", "_").replace("\\", "_").replace(os.sep, "_")[:80]


def _label(constants: Mapping[str, int]) -> str:
    from solar_assets.workloads import size_label

    return size_label(constants)


def _torch_version() -> str:
    import torch

    return torch.__version__


def _jax_versions() -> str:
    """jax, jaxlib and flax versions (from package metadata: nothing is imported)."""
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    return "jax" + ",".join(version(n) for n in ("jax", "jaxlib", "flax"))


@dataclass(frozen=True)
class BoundsRow:
    """The bounds of one workload on one hardware and the report row made from them."""

    bounds: Any  # solar_assets.bounds.SolBounds
    row: ReportRow


# ---------------------------------------------------------------------------- the whole chain
@dataclass
class WorkloadResult:
    """What one workload gave: a row per hardware, or the error that stopped it."""

    workload: str
    path: str
    rows: list[ReportRow] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # by stage (analyze_workload: STAGES)
    error: str | None = None
    failed_stage: str | None = None
    validated_size: str | None = None  # "full" or "BATCH=3,..." once the size is chosen

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def total_s(self) -> float:
        return sum(self.seconds.values())


def analyze_workload(
    path: str | Path,
    hardware_names: Sequence[str] = DEFAULT_HARDWARE,
    target_latency_s: float | None = None,
    cache_dir: str | Path | None = None,
    hardware_dir: str | Path | None = None,
    validation_budget: ValidationBudget | None = None,
    translator: str | None = None,
    cache_aware: bool = True,
    ski_slope_dir: str | Path | None = None,
    measure: MeasureOptions | None = None,
    fp32_math: str | None = None,
) -> WorkloadResult:
    """Source → IR (full size) → validation size → golden → validation → einsum graph → bounds
    on each hardware → cache-aware bound at each hardware's buffer (``cache_aware``), and the
    ski-slope CSV/PNG into ``ski_slope_dir`` when given.

    Never raises for a bad workload or spec: the result's ``error`` names the file and the
    problem, and ``failed_stage`` which stage stopped. ``cache_dir=None`` recomputes all.
    """
    from solar_assets.report import add_cache_aware, report_row

    from solar_assets.workloads.source import workload_name

    path = Path(path)
    result = WorkloadResult(workload=workload_name(path), path=str(path))
    cache = Path(cache_dir) if cache_dir is not None else None
    stage = "trace"
    try:
        with _timed(result, stage):
            src = read_source(path)
            specs = [load_spec(name, hardware_dir) for name in hardware_names]
            translation = translate_source(src, cache, translator=translator)
        stage = "size"
        with _timed(result, stage):
            size = validation_size_for(src, translation, cache, validation_budget)
            result.validated_size = size.label
        stage = "golden"
        with _timed(result, stage):
            golden = golden_for(src, cache, size)
        stage = "validate"
        with _timed(result, stage):
            validated = validate_translation(src, translation, golden, cache)
        stage = "graph"
        with _timed(result, stage):
            graph = lift_graph(src, validated)
        stage = "bounds"
        with _timed(result, stage):
            bounded_specs, spec_errors = [], []
            for hw in specs:
                try:  # a dtype one spec lacks drops only that spec's row, with a line saying why
                    bounds = bound_graph(src, graph, hw, fp32_math)
                except SolarError as e:
                    spec_errors.append(with_path(str(e), path))
                    continue
                inverse = inverse_for(src, graph, hw, target_latency_s, bounds)
                result.rows.append(report_row(src, validated.translation, validated.result, graph, bounds, hw,
                                              inverse=inverse, target_latency_s=target_latency_s,
                                              validated_size=validated.validated_size))
                bounded_specs.append(hw)
            specs = bounded_specs
            if spec_errors:
                result.error = "; ".join(spec_errors)
        if cache_aware:
            stage = "cache_aware"
            with _timed(result, stage):
                result.rows = [add_cache_aware(row, cache_aware_for(src, graph, hw, cache))
                               for row, hw in zip(result.rows, specs)]
                if ski_slope_dir is not None:
                    ski_slope_for(src, graph, Path(ski_slope_dir), {hw.name: hw.onchip_buffer_bytes for hw in specs},
                                  cache)
        if measure is not None:
            stage = "measure"
            with _timed(result, stage):
                result.rows = measure_rows(path, result.rows, measure)
    except SolarError as e:
        result.error, result.failed_stage, result.rows = with_path(str(e), path), stage, []
    except Exception as e:  # a stage bug must not take the other workloads down; say where it was
        logger.debug("%s: %s failed", path, stage, exc_info=True)
        result.error = f"{path}: {stage} failed unexpectedly: {type(e).__name__}: {e}"
        result.failed_stage, result.rows = stage, []
    return result


def measure_rows(path: str | Path, rows: Sequence[ReportRow], options: MeasureOptions | None = None,
                 host: str = "host") -> list[ReportRow]:
    """Run the workload on this host (``solar_assets.measure``) and fill the measured, headroom and
    violation columns of its rows on ``host`` (the hardware the run used). Rows on other hardware
    come back unchanged, and nothing runs when there is no such row. Never cached: a measurement
    belongs to the moment and the machine."""
    from solar_assets.measure import MeasureOptions, add_measurement, measure_workload

    rows = list(rows)
    if not any(r.hardware == host for r in rows):
        return rows
    name = Path(path).stem
    measurement = measure_workload(path, options or MeasureOptions(), progress=lambda stage: _starting(name, stage))
    failed = {t.error for t in measurement.timings.values() if t.error}
    for note in measurement.notes:
        (logger.warning if note in failed else logger.info)("%s", note)
    return [add_measurement(r, measurement, host) for r in rows]


def analyze_workloads(paths: Sequence[str | Path], hardware_names: Sequence[str] = DEFAULT_HARDWARE,
                      **kwargs: Any) -> list[WorkloadResult]:
    """``analyze_workload`` over files and directories (``discover_workloads`` expands them), in
    this process (no isolation: ``analyze_in_workers`` is what ``solar analyze`` runs)."""
    from solar_assets.workloads import discover_workloads

    return [analyze_workload(p, hardware_names, **kwargs) for p in discover_workloads(*paths)]


DEFAULT_TIMEOUT_S = 600.0  # per workload file, as ``solar coverage``


def analyze_in_workers(paths: Sequence[str | Path], hardware_names: Sequence[str] = DEFAULT_HARDWARE, *,
                       timeout_s: float | None = DEFAULT_TIMEOUT_S, memory_limit_bytes: int | None = None,
                       cache_dir: str | Path | None = None,
                       on_stage: Callable[[str, str], None] | None = None, **kwargs: Any) -> list[WorkloadResult]:
    """``analyze_workload`` for each file in a worker process (``solar_assets.workers``): each
    file limited to ``timeout_s`` seconds and ``memory_limit_bytes`` of resident memory, the
    process state it changes (torch's default dtype, cwd, sys.path, environment, threads) put
    back before the next file, and what it prints kept off stdout. A hang, a crash or a kill
    costs only that file's result, whose error names the file, the stage and why.
    ``on_stage(workload, stage)`` as each stage starts; ``kwargs`` as for ``analyze_workload``."""
    from solar_assets.workers import run_in_workers

    options = {"hardware_names": list(hardware_names), **kwargs}
    return run_in_workers(paths, _analyze_task, unfinished_result, cache_dir, jobs=1, timeout_s=timeout_s,
                          memory_limit_bytes=memory_limit_bytes, task_arg=options,
                          on_event=(lambda index, workload, stage: on_stage(workload, stage)) if on_stage else None)


def _analyze_task(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    return analyze_workload(path, cache_dir=cache_dir, **options)


def measure_in_workers(results: Sequence[WorkloadResult], measure: MeasureOptions | None, *,
                       timeout_s: float | None = DEFAULT_TIMEOUT_S,
                       memory_limit_bytes: int | None = None) -> list[WorkloadResult]:
    """``measure_rows`` for each result's file in a worker process (the limits and isolation of
    ``analyze_in_workers``); one result per input, with its measured rows or the error."""
    from solar_assets.workers import run_in_workers

    rows = {r.path: list(r.rows) for r in results}
    return run_in_workers([r.path for r in results], _measure_task, unfinished_result, None, jobs=1,
                          timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes,
                          task_arg={"measure": measure, "rows": rows})


def _measure_task(path: str, cache_dir: str | None, arg: dict[str, Any]) -> WorkloadResult:
    from solar_assets.workloads.source import workload_name

    result = WorkloadResult(workload=workload_name(path), path=path)
    try:
        with _timed(result, "measure"):
            result.rows = measure_rows(path, arg["rows"][path], arg["measure"])
    except SolarError as e:
        result.error, result.failed_stage = with_path(str(e), path), "measure"
    except Exception as e:  # as in analyze_workload: one line naming the file and the stage
        result.error, result.failed_stage = f"{path}: measure failed unexpectedly: {type(e).__name__}: {e}", "measure"
    return result


def unfinished_result(path: str | Path, message: str, seconds: float, last_event: str | None) -> WorkloadResult:
    """The result of a workload whose worker was killed (time or memory limit) or died: the
    message says why and during which stage (``last_event``: "trace", "golden at BATCH=3", ...)."""
    from solar_assets.workloads.source import workload_name

    where = f" during {last_event}" if last_event else " before its first stage"
    stage = last_event.split(" ", 1)[0] if last_event else None
    return WorkloadResult(workload=workload_name(path), path=str(path), error=with_path(message + where, path),
                          failed_stage=stage, seconds={"unfinished": seconds})


def one_line(message: str) -> str:
    """A multi-line message (one fault per line) as one line, faults separated by '; '."""
    return "; ".join(" ".join(line.split()) for line in message.splitlines() if line.strip())


def with_path(message: str, path: str | Path) -> str:
    """The message on one line, prefixed by the file when it does not name it already."""
    text = one_line(message)
    return text if str(path) in text or Path(path).name in text else f"{path}: {text}"


@contextlib.contextmanager
def _timed(result: WorkloadResult, stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        result.seconds[stage] = result.seconds.get(stage, 0.0) + time.perf_counter() - start
