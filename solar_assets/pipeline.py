"""Compatibility facade over ``solar_assets.chain``: the names callers imported from here before
the chain was split into stages (``chain.stages``), typed values (``chain.artifacts``), run
options (``chain.config.RunConfig``), progress events (``solar_assets.progress``) and the chain
itself (``asset_compute.plain``: the declared asset graph walked in memory).

The functions keep their old signatures, where options came as keyword arguments (or from the
environment, ``RunConfig.from_env``) and a golden run chose its own size; each builds the
``RunConfig`` and composes the stage functions, which do not call each other. New code calls
``solar_assets.chain`` directly.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from solar_assets.cache_store import package_fingerprint, source_entry
from solar_assets.chain import stages
from solar_assets.chain.artifacts import BoundsRow, SizeChoice, WorkloadResult
from solar_assets.chain.config import RunConfig
from solar_assets.progress import progress_listener, starting
from solar_assets.chain.run import (
    DEFAULT_HARDWARE,
    DEFAULT_TIMEOUT_S,
    STAGES,
    Kept,
    measure_in_workers,
    unfinished_result,
)
from solar_assets.chain.stages import (
    CACHE_AWARE_PACKAGES,
    GOLDEN_PACKAGES,
    TRACE_PACKAGES,
    cache_aware_for,
    fp32_math_of,
    lift_graph,
    load_spec,
    measure_rows,
    ski_slope_for,
)
from solar_assets.errors import one_line, with_path
from solar_assets.paths import REPO_ROOT, default_cache_dir, reports_dir, solar_home
from solar_assets.validate.errors import ValidationFailed
from solar_assets.validate.validated import ValidatedIR, validation_summary
from solar_assets.workloads.training import TrainSpec

if TYPE_CHECKING:
    from solar_assets.bounds import InverseRoofline, SolBounds
    from solar_assets.golden import Golden
    from solar_assets.graph import EinsumGraph
    from solar_assets.hardware import HardwareSpec
    from solar_assets.measure import MeasureOptions
    from solar_assets.sizing import ValidationBudget, ValidationSize
    from solar_assets.translate import Translation
    from solar_assets.workloads import WorkloadSource

__all__ = [
    "BoundsRow", "CACHE_AWARE_PACKAGES", "DEFAULT_HARDWARE", "DEFAULT_TIMEOUT_S", "GOLDEN_PACKAGES", "REPO_ROOT",
    "RunConfig", "STAGES", "SizeChoice", "TRACE_PACKAGES", "ValidatedIR", "ValidationFailed", "WorkloadResult",
    "analyze_in_workers", "analyze_workload", "analyze_workloads", "bound_graph", "cache_aware_for",
    "cached_translation", "default_cache_dir", "fp32_math_of", "golden_for", "inverse_for", "lift_graph",
    "load_spec", "measure_in_workers", "measure_rows", "one_line", "package_fingerprint", "progress_listener",
    "read_source", "reports_dir", "size_or_nodewise", "ski_slope_for", "solar_home", "source_entry", "starting",
    "translate_source", "translator_choice", "unfinished_result", "validate_nodewise_stage", "validate_translation", "validation_size_for",
    "validation_summary", "with_path",
]

_CONFIG_OPTIONS = ("translator", "fp32_math", "validation_budget", "train")


def _config(translator: str | None = None, fp32_math: str | None = None,
            validation_budget: ValidationBudget | None = None, framework: str | None = None,
            train: TrainSpec | None = None) -> RunConfig:
    return RunConfig.from_env(translator=translator, fp32_math=fp32_math, validation_budget=validation_budget,
                              framework=framework, train=train)


def translator_choice(translator: str | None = None) -> str:
    """``translator``, else ``$SOLAR_TRANSLATOR``, else "tracer" (``RunConfig.from_env``)."""
    return _config(translator).translator


def read_source(path: str | Path, framework: str | None = None) -> WorkloadSource:
    return stages.read_source(path, _config(framework=framework))


def translate_source(src: WorkloadSource, cache_dir: Path | None = None,
                     constants: Mapping[str, int] | None = None, translator: str | None = None) -> Translation:
    return stages.translate(src, _config(translator), cache_dir, constants)


def cached_translation(src: WorkloadSource, cache_dir: Path | None, translator: str | None = None) -> Translation | None:
    return stages.cached_translation(src, _config(translator), cache_dir)


def validation_size_for(src: WorkloadSource, translation: Translation, cache_dir: Path | None = None,
                        budget: ValidationBudget | None = None) -> ValidationSize:
    return stages.choose_size(src, translation, _config(validation_budget=budget), cache_dir)


def size_or_nodewise(src: WorkloadSource, translation: Translation, cache_dir: Path | None,
                     budget: ValidationBudget | None) -> tuple[ValidationSize | None, Exception | None]:
    choice = stages.choose_size_or_nodewise(src, translation, _config(validation_budget=budget), cache_dir)
    return choice.size, choice.error


def golden_for(src: WorkloadSource, cache_dir: Path | None = None,
               size: ValidationSize | Mapping[str, int] | None = None, translator: str | None = None) -> Golden:
    """The golden outputs at ``size``; None: at the size ``validation_size_for`` chooses for
    ``translator``'s IR (traced, cached)."""
    if size is None:
        config = _config(translator)
        size = stages.choose_size(src, stages.translate(src, config, cache_dir), config, cache_dir)
    return stages.golden(src, size, cache_dir)


def validate_translation(src: WorkloadSource, translation: Translation, golden: Golden,
                         cache_dir: Path | None = None) -> ValidatedIR:
    """``retrace`` at the golden outputs' size, then ``validate``."""
    scaled = stages.retrace(src, translation, golden.constants, cache_dir)
    return stages.validate(src, translation, golden, scaled, cache_dir)


def validate_nodewise_stage(src: WorkloadSource, translation: Translation, size_error: Exception | None = None,
                            cache_dir: Path | None = None) -> ValidatedIR:
    """``chain.stages.validate_nodewise`` for a tracer IR no validation size fits (``size_error``: why)."""
    from solar_assets.sizing import ValidationSizeError

    error = size_error if isinstance(size_error, ValidationSizeError) or size_error is None else \
        ValidationSizeError(str(size_error))
    return stages.validate_nodewise(src, translation, SizeChoice(None, error), _config(), cache_dir)


def bound_graph(src: WorkloadSource, graph: EinsumGraph, hw: HardwareSpec, fp32_math: str | None = None) -> SolBounds:
    return stages.bound_graph(src, graph, hw, _config(fp32_math=fp32_math))


def inverse_for(src: WorkloadSource, graph: EinsumGraph, hw: HardwareSpec, target_latency_s: float | None,
                bounds: SolBounds | None = None) -> InverseRoofline | None:
    if target_latency_s is None:
        return None
    bounds = bounds if bounds is not None else bound_graph(src, graph, hw)  # the row's peaks and fp32 policy
    return stages.inverse_for(src, hw, target_latency_s, bounds)


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
    keep: dict[str, object] | None = None,
    config: RunConfig | None = None,
    train: TrainSpec | None = None,
) -> WorkloadResult:
    """``asset_compute.plain.analyze_workload`` with the options as arguments; ``keep``, when given,
    receives the in-process results (``validated``, ``graph``, ``bounds`` by hardware name, and
    ``failed_validation``) as a dict."""
    from solar_assets.asset_compute.plain import analyze_workload as _analyze_workload

    config = config or _config(translator, fp32_math, validation_budget, train=train)
    kept = Kept() if keep is not None else None
    result = _analyze_workload(path, hardware_names, config=config, target_latency_s=target_latency_s,
                               cache_dir=cache_dir, hardware_dir=hardware_dir, cache_aware=cache_aware,
                               ski_slope_dir=ski_slope_dir, measure=measure, keep=kept)
    if keep is not None and kept is not None:
        if kept.graph is not None:
            keep.update(validated=kept.validated, graph=kept.graph, bounds=kept.bounds)
        if kept.failed_validation is not None:
            keep["failed_validation"] = kept.failed_validation
    return result


def analyze_in_workers(paths: Sequence[str | Path], hardware_names: Sequence[str] = DEFAULT_HARDWARE, *,
                       timeout_s: float | None = DEFAULT_TIMEOUT_S, memory_limit_bytes: int | None = None,
                       cache_dir: str | Path | None = None, on_stage: Callable[[str, str], None] | None = None,
                       jobs: int = 1, **options: object) -> list[WorkloadResult]:
    """``asset_compute.plain.analyze_in_workers``; ``translator``, ``fp32_math`` and
    ``validation_budget`` among ``options`` become the run's ``RunConfig``."""
    from solar_assets.asset_compute.plain import analyze_in_workers as _analyze_in_workers

    given = {k: options.pop(k) for k in _CONFIG_OPTIONS if k in options}
    config = options.pop("config", None) or _config(**given)  # type: ignore[arg-type]
    return _analyze_in_workers(paths, hardware_names, timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes,
                               cache_dir=cache_dir, on_stage=on_stage, config=config, jobs=jobs, **options)


def analyze_workloads(paths: Sequence[str | Path], hardware_names: Sequence[str] = DEFAULT_HARDWARE,
                      **options: object) -> list[WorkloadResult]:
    """``analyze_workload`` over files and directories (``discover_workloads`` expands them), in
    this process (no isolation: ``analyze_in_workers`` is what ``solar analyze`` runs)."""
    from solar_assets.workloads import discover_workloads

    return [analyze_workload(p, hardware_names, **options) for p in discover_workloads(*paths)]  # type: ignore[arg-type]
