"""The chain: one workload through every stage, as plain Python (the CLI, ``solar.analyze``,
``solar coverage`` and the bench run it; the Dagster assets call the same stage functions).

Source → IR (full size) → validation size → golden outputs and the IR re-traced at that size
(or node-wise at full size when no size fits) → validation → einsum graph → bounds on each
hardware → cache-aware bracket → report row. ``validate_ir`` is the part up to the verdict,
shared with ``solar coverage`` (which stops there); ``analyze_workload`` runs it all and never
raises on bad input: a workload that fails any stage comes back with ``error`` naming the file
and the problem, and ``failed_stage`` which stage stopped it.

The validation verdict gates everything downstream: an IR that does not reproduce the golden
outputs gets no bounds (``ValidationFailed``), because a bound of a wrong program bounds nothing.
"""
from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from solar_assets.chain import stages
from solar_assets.chain.artifacts import SizeChoice, WorkloadResult
from solar_assets.chain.config import RunConfig
from solar_assets.errors import SolarError, with_path
from solar_assets.validate.errors import ValidationFailed
from solar_assets.validate.validated import ValidatedIR

if TYPE_CHECKING:
    from solar_assets.bounds import SolBounds
    from solar_assets.golden import Golden
    from solar_assets.graph import EinsumGraph
    from solar_assets.measure import MeasureOptions
    from solar_assets.translate import Translation
    from solar_assets.validate.compare import ValidationResult
    from solar_assets.workloads import WorkloadSource

logger = logging.getLogger(__name__)

DEFAULT_HARDWARE = ("H100_SXM",)
# Stage names as timed and shown in progress lines, in chain order.
STAGES = ("trace", "size", "golden", "validate", "graph", "bounds", "cache_aware")
DEFAULT_TIMEOUT_S = 600.0  # per workload file, as ``solar coverage``


@dataclass
class ChainState:
    """Where the chain is: the stage running (the one a failure is charged to), the seconds of
    each, and the validation size once chosen."""

    seconds: dict[str, float] = field(default_factory=dict)
    stage: str = "trace"
    validated_size: str | None = None

    @contextlib.contextmanager
    def timing(self, stage: str) -> Iterator[None]:
        self.stage = stage
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - start


@dataclass
class Kept:
    """The in-process results of ``analyze_workload`` for callers that show more than the rows
    (``solar.analyze``): filled as the stages finish."""

    validated: ValidatedIR | None = None
    graph: EinsumGraph | None = None
    bounds: dict[str, SolBounds] = field(default_factory=dict)
    failed_validation: ValidationResult | None = None


def validate_ir(src: WorkloadSource, translation: Translation, config: RunConfig, cache_dir: Path | None,
                state: ChainState) -> ValidatedIR:
    """The chain from the full-size IR to the verdict: the validation size, then the golden outputs
    (``golden_at``) and the validation (``validate_at``: the IR re-traced at that size, or
    node-wise at the file's own size when no size fits). Raises the stage's ``SolarError``;
    ``state`` says which stage."""
    with state.timing("size"):
        choice = stages.choose_size_or_nodewise(src, translation, config, cache_dir)
        state.validated_size = choice.label
    if not choice.nodewise:
        with state.timing("golden"):
            golden = golden_at(src, choice, cache_dir)
    else:
        golden = None
    with state.timing("validate"):
        validated = validate_at(src, translation, choice, golden, config, cache_dir)
        state.validated_size = validated.validated_size
    return validated


def golden_at(src: WorkloadSource, choice: SizeChoice, cache_dir: Path | None) -> Golden | None:
    """The golden outputs at the chosen size; None for node-wise validation (which runs the
    framework itself, node by node, at the file's own size)."""
    return None if choice.size is None else stages.golden(src, choice.size, cache_dir)


def validate_at(src: WorkloadSource, translation: Translation, choice: SizeChoice, golden: Golden | None,
                config: RunConfig, cache_dir: Path | None) -> ValidatedIR:
    """The verdict at the chosen size: node-wise when ``choice`` says so (``golden`` None), else
    the IR re-traced at the golden outputs' size (``stages.retrace``) run on them. The one
    validation step of the plain chain, ``solar coverage`` and the ``ir_validation`` asset."""
    if choice.nodewise or golden is None:
        return stages.validate_nodewise(src, translation, choice, config, cache_dir)
    scaled = stages.retrace(src, translation, golden.constants, cache_dir)
    return stages.validate(src, translation, golden, scaled, cache_dir)


def analyze_workload(path: str | Path, hardware_names: Sequence[str] = DEFAULT_HARDWARE, *,
                     config: RunConfig | None = None, target_latency_s: float | None = None,
                     cache_dir: str | Path | None = None, hardware_dir: str | Path | None = None,
                     cache_aware: bool = True, ski_slope_dir: str | Path | None = None,
                     measure: MeasureOptions | None = None, keep: Kept | None = None) -> WorkloadResult:
    """Every stage for one file: the rows on each hardware, with the cache-aware bracket at each
    hardware's buffer (``cache_aware``), the ski-slope CSV/PNG into ``ski_slope_dir`` when given,
    and the measured columns on ``host`` when ``measure`` is given.

    Never raises for a bad workload or spec: the result's ``error`` names the file and the
    problem, and ``failed_stage`` which stage stopped. ``cache_dir=None`` recomputes all.
    ``config`` None: ``RunConfig.from_env()``."""
    from solar_assets.report import assemble_row, complete_row
    from solar_assets.report.per_op import per_op_rows
    from solar_assets.workloads.source import workload_name

    config = config or RunConfig.from_env()
    path = Path(path)
    result = WorkloadResult(workload=workload_name(path), path=str(path))
    cache = Path(cache_dir) if cache_dir is not None else None
    state = ChainState(result.seconds)
    try:
        with state.timing("trace"):
            src = stages.read_source(path, config, cache)
            specs = [stages.load_spec(name, hardware_dir) for name in hardware_names]
            translation = stages.translate(src, config, cache)
        try:
            validated = validate_ir(src, translation, config, cache, state)
        finally:
            result.validated_size = state.validated_size
        with state.timing("graph"):
            graph = stages.lift_graph(src, validated)
        if keep is not None:
            keep.validated, keep.graph = validated, graph
        with state.timing("bounds"):
            bounded, spec_errors = [], []
            for hw in specs:
                try:  # a dtype one spec lacks drops only that spec's row, with a line saying why
                    bounds = stages.bound_graph(src, graph, hw, config)
                except SolarError as e:
                    spec_errors.append(with_path(str(e), path))
                    continue
                if keep is not None:
                    keep.bounds[hw.name] = bounds
                result.per_op += per_op_rows(result.workload, graph, bounds, hw.name)
                bounded.append((hw, bounds, stages.inverse_for(src, hw, target_latency_s, bounds)))
            if spec_errors:
                result.error = "; ".join(spec_errors)
            result.rows = [assemble_row(src, validated, graph, bounds, hw, inverse=inverse,
                                        target_latency_s=target_latency_s) for hw, bounds, inverse in bounded]
        if cache_aware:
            with state.timing("cache_aware"):
                result.rows = [complete_row(row, cache_aware=stages.cache_aware_for(src, graph, hw, cache))
                               for row, (hw, _, _) in zip(result.rows, bounded)]
                if ski_slope_dir is not None:
                    try:
                        stages.ski_slope_for(src, graph, Path(ski_slope_dir),
                                             {hw.name: hw.onchip_buffer_bytes for hw, _, _ in bounded}, cache)
                    except OSError as e:  # a picture: a full or read-only disk costs it, not the rows
                        logger.warning("%s: no ski-slope written to %s (%s)", path, ski_slope_dir, e.strerror or e)
        if measure is not None:
            with state.timing("measure"):
                result.rows = stages.measure_rows(path, result.rows, measure)
    except SolarError as e:
        result.error, result.failed_stage, result.rows = with_path(str(e), path), state.stage, []
        if keep is not None and isinstance(e, ValidationFailed):
            keep.failed_validation = e.result
    except Exception as e:  # a stage bug must not take the other workloads down; say where it was
        logger.debug("%s: %s failed", path, state.stage, exc_info=True)
        result.error = f"{path}: {state.stage} failed unexpectedly: {type(e).__name__}: {e}"
        result.failed_stage, result.rows = state.stage, []
    return result


def analyze_workloads(paths: Sequence[str | Path], hardware_names: Sequence[str] = DEFAULT_HARDWARE,
                      **options: object) -> list[WorkloadResult]:
    """``analyze_workload`` over files and directories (``discover_workloads`` expands them), in
    this process (no isolation: ``analyze_in_workers`` is what ``solar analyze`` runs)."""
    from solar_assets.workloads import discover_workloads

    return [analyze_workload(p, hardware_names, **options) for p in discover_workloads(*paths)]  # type: ignore[arg-type]


def analyze_in_workers(paths: Sequence[str | Path], hardware_names: Sequence[str] = DEFAULT_HARDWARE, *,
                       timeout_s: float | None = DEFAULT_TIMEOUT_S, memory_limit_bytes: int | None = None,
                       cache_dir: str | Path | None = None, on_stage: Callable[[str, str], None] | None = None,
                       jobs: int = 1, **options: object) -> list[WorkloadResult]:
    """``analyze_workload`` for each file in a worker process (``solar_assets.workers``): each
    file limited to ``timeout_s`` seconds and ``memory_limit_bytes`` of resident memory, the
    process state it changes (torch's default dtype, cwd, sys.path, environment, threads) put
    back before the next file, and what it prints kept off stdout. A hang, a crash or a kill
    costs only that file's result, whose error names the file, the stage and why.
    ``on_stage(workload, stage)`` as each stage starts; ``jobs`` workers run side by side (each file
    still alone in its worker); ``options`` as for ``analyze_workload``."""
    from solar_assets.workers import run_in_workers

    task_options = {"hardware_names": list(hardware_names), **options}
    results = run_in_workers(paths, _analyze_task, unfinished_result, cache_dir, jobs=max(1, jobs),
                             timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes, task_arg=task_options,
                             on_event=(lambda index, workload, stage: on_stage(workload, stage)) if on_stage else None)
    for result in results:
        result.mark_rows()
    return results


def _analyze_task(path: str, cache_dir: str | None, options: dict[str, object]) -> WorkloadResult:
    return analyze_workload(path, cache_dir=cache_dir, **options)  # type: ignore[arg-type]


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


def _measure_task(path: str, cache_dir: str | None, arg: dict[str, object]) -> WorkloadResult:
    from solar_assets.workloads.source import workload_name

    result = WorkloadResult(workload=workload_name(path), path=path)
    state = ChainState(result.seconds)
    try:
        with state.timing("measure"):
            result.rows = stages.measure_rows(path, arg["rows"][path], arg["measure"])  # type: ignore[index]
    except SolarError as e:
        result.error, result.failed_stage = with_path(str(e), path), "measure"
    except Exception as e:  # as in analyze_workload: one line naming the file and the stage
        result.error, result.failed_stage = f"{path}: measure failed unexpectedly: {type(e).__name__}: {e}", "measure"
    return result


def unfinished_result(path: str | Path, message: str, seconds: float, last_event: str | None) -> WorkloadResult:
    """The result of a workload whose worker was killed (time or memory limit) or died: the
    message says why and during which stage (``last_event``: "trace", "golden at BATCH=3", ...)."""
    from solar_assets.workloads.source import workload_name

    where = f" during {last_event}" if last_event else ("" if last_event == "" else " before its first stage")
    stage = last_event.split(" ", 1)[0] if last_event else None
    return WorkloadResult(workload=workload_name(path), path=str(path), error=with_path(message + where, path),
                          failed_stage=stage, seconds={"unfinished": seconds})
