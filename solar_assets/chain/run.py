"""The chain: one workload through every stage, as plain Python (``--no-dagster``, ``solar.analyze``,
``solar coverage`` and the bench run it), composed from the one declaration of the asset graph
(``asset_compute.graph``): ``analyze_workload`` walks its nodes in memory, handing each asset's
function the values of its declared inputs, as a Dagster step and a ``solar analyze`` worker do.

Source → IR (full size) → validation size and golden outputs (the IR's sizes decide) → validation
(the IR re-traced at that size, or node-wise at full size when no size fits) → einsum graph →
per hardware: cache-aware bracket → SOL bounds and report row → inverse roofline. ``validate_ir``
is the part up to the verdict, shared with ``solar coverage`` (which stops there);
``analyze_workload`` runs it all and never raises on bad input: a workload that fails any stage comes back with ``error`` naming the file
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

from solar_assets.asset_compute.settings import AssetSettings
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
    _since: float = field(default=0.0, repr=False)

    @contextlib.contextmanager
    def timing(self, stage: str) -> Iterator[None]:
        self.stage = stage
        self._since = time.perf_counter()
        try:
            yield
        finally:
            self._charge()

    def _charge(self) -> None:
        now = time.perf_counter()
        self.seconds[self.stage] = self.seconds.get(self.stage, 0.0) + now - self._since
        self._since = now

    def follow(self, stages: Sequence[str]) -> Callable[[str, str], None]:
        """A ``progress`` listener that moves the charge to the stage a stage function announces
        ("size", then "golden at BATCH=3"), among ``stages``; the size label is kept (a file whose
        golden run fails still says at which size)."""
        def on_stage(workload: str, announced: str) -> None:
            first, _, rest = announced.partition(" ")
            if first == "golden" and rest.startswith("at "):
                self.validated_size = rest[3:]
            if first in stages and first != self.stage:
                self._charge()
                self.stage = first
        return on_stage


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


@dataclass(frozen=True)
class PlainSettings(AssetSettings):
    """The asset functions' settings for the plain chain: its own run options, its cache (None:
    recompute all) and ski-slope directory, instead of those under ``$SOLAR_HOME``."""

    config: RunConfig = field(default_factory=RunConfig)
    cache: Path | None = None
    ski_slope_out: Path | None = None

    @property
    def run_config(self) -> RunConfig:
        return self.config

    @property
    def cache_dir(self) -> Path | None:  # type: ignore[override]
        return self.cache

    @property
    def ski_slope_dir(self) -> Path:
        return self.ski_slope_out or super().ski_slope_dir


# The chain's stage names (``STAGES``, ``failed_stage``, ``seconds``) of each asset; a node that
# spans two stages is charged to the one its stage functions announce (``progress.starting``).
NODE_STAGES = {"workload_source": ("trace",), "hardware_spec": ("trace",), "ir_translation": ("trace",),
               "golden_outputs": ("golden", "size"), "ir_validation": ("validate",), "einsum_graph": ("graph",),
               "cache_aware_bound": ("cache_aware",), "sol_bounds": ("bounds",), "inverse_roofline": ("bounds",),
               "ski_slope": ("cache_aware",)}


class _PlainWalk:
    """One file through the declared asset graph (``asset_compute.graph``) in memory: each node's
    function on its inputs' values, as a Dagster step or a worker calls it."""

    def __init__(self, settings: PlainSettings, key: str, state: ChainState) -> None:
        self.settings, self.key, self.state = settings, key, state
        self.values: dict[tuple[str, str | None], object] = {}

    def run(self, node, hardware: str | None = None, **options: object) -> object:  # noqa: ANN001 - AssetNode
        from solar_assets.progress import progress_listener

        def partition(name: str) -> tuple[str, str | None]:
            from solar_assets.asset_compute.graph import NODES

            return (name, None) if NODES[name].partitioning == "workload" else (name, hardware)

        kwargs = {name: self.values[partition(name)] for name in node.inputs}
        if node.takes_key:
            kwargs["key"] = hardware if node.partitioning == "hardware" else self.key
        stages = NODE_STAGES[node.name]
        with self.state.timing(stages[0]), progress_listener(self.state.follow(stages)):
            value = node.fn(**kwargs, solar=self.settings, **options).value
        self.values[(node.name, None if node.partitioning == "workload" else hardware)] = value
        return value

    def give(self, name: str, hardware: str | None, value: object) -> None:
        self.values[(name, hardware)] = value


def analyze_workload(path: str | Path, hardware_names: Sequence[str] = DEFAULT_HARDWARE, *,
                     config: RunConfig | None = None, target_latency_s: float | None = None,
                     cache_dir: str | Path | None = None, hardware_dir: str | Path | None = None,
                     cache_aware: bool = True, ski_slope_dir: str | Path | None = None,
                     measure: MeasureOptions | None = None, keep: Kept | None = None) -> WorkloadResult:
    """Every stage for one file: the declared asset graph (``asset_compute.graph``) walked in
    memory — each asset's function on its inputs, as the Dagster assets and the workers of
    ``solar analyze`` compose them — giving the rows on each hardware, with the cache-aware bracket
    at each hardware's buffer (``cache_aware``), the ski-slope CSV/PNG into ``ski_slope_dir`` when
    given, and the measured columns on ``host`` when ``measure`` is given.

    Never raises for a bad workload or spec: the result's ``error`` names the file and the
    problem, and ``failed_stage`` which stage stopped. ``cache_dir=None`` recomputes all.
    ``config`` None: ``RunConfig.from_env()``."""
    from solar_assets.asset_compute.graph import BOUND_NODES, HARDWARE_NODE, NODES, WORKLOAD_NODES
    from solar_assets.hardware import hardware_dir as default_hardware_dir
    from solar_assets.paths import solar_home
    from solar_assets.report import complete_row
    from solar_assets.report.per_op import per_op_rows
    from solar_assets.workloads.source import workload_name

    config = config or RunConfig.from_env()
    path = Path(path)
    result = WorkloadResult(workload=workload_name(path), path=str(path))
    key = result.workload
    settings = PlainSettings(
        home=str(solar_home(None)), workload_dir=str(path.parent),
        hardware_dir=str(hardware_dir if hardware_dir is not None else default_hardware_dir()),
        target_latency_s=target_latency_s, workload_files={key: str(path)}, translator=config.translator,
        framework=config.framework, fp32_math=config.fp32_math, config=config,
        cache=Path(cache_dir) if cache_dir is not None else None,
        ski_slope_out=Path(ski_slope_dir) if ski_slope_dir is not None else None)
    state = ChainState(result.seconds)
    walk = _PlainWalk(settings, key, state)
    workload_nodes = [n for n in WORKLOAD_NODES if n.name != "ski_slope"]
    try:
        for name in hardware_names:  # a spec that cannot be read stops the file before any tracing
            walk.run(HARDWARE_NODE, name)
        try:
            for node in workload_nodes:
                walk.run(node)
        finally:
            validated = walk.values.get(("ir_validation", None))
            result.validated_size = getattr(validated, "validated_size", None) or state.validated_size
        graph = walk.values[("einsum_graph", None)]
        if keep is not None:
            keep.validated, keep.graph = validated, graph  # type: ignore[assignment]
        spec_errors = []
        for name in hardware_names:
            if not cache_aware:
                walk.give("cache_aware_bound", name, None)
            try:  # a dtype one spec lacks drops only that spec's row, with a line saying why
                for node in BOUND_NODES:
                    if (node.name == "cache_aware_bound" and not cache_aware) or \
                            (node.name == "inverse_roofline" and target_latency_s is None):
                        continue
                    walk.run(node, name)
            except SolarError as e:
                spec_errors.append(with_path(str(e), path))
                continue
            bounds_row = walk.values[("sol_bounds", name)]
            if keep is not None:
                keep.bounds[name] = bounds_row.bounds  # type: ignore[attr-defined]
            result.per_op += per_op_rows(result.workload, graph, bounds_row.bounds, name)  # type: ignore[attr-defined]
            result.rows.append(complete_row(bounds_row.row, inverse=walk.values.get(("inverse_roofline", name)),  # type: ignore[attr-defined]
                                            target_latency_s=target_latency_s))
        if spec_errors:
            result.error = "; ".join(spec_errors)
        if ski_slope_dir is not None and result.rows:
            try:
                walk.run(NODES["ski_slope"])
            except (OSError, SolarError) as e:  # a picture: a full or read-only disk costs it, not the rows
                logger.warning("%s: no ski-slope written to %s (%s)", path, ski_slope_dir,
                               getattr(e, "strerror", None) or e)
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
