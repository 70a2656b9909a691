"""The plain path: the declared asset graph (``asset_compute.graph``) walked in memory for one file.

``--no-dagster``, ``solar.analyze``, ``solar coverage``'s rows and the bench run it:
``analyze_workload`` hands each asset's function the values of its declared inputs, as a Dagster
step (``dagster_defs.assets.asset_of``) and a ``solar analyze`` worker (``asset_compute.worker``)
do, so the three paths cannot compose the stages differently.

Source → IR (full size) → validation size and golden outputs (the IR's sizes decide) → validation
(the IR re-traced at that size, or node-wise at full size when no size fits) → einsum graph → per
hardware: cache-aware bracket → SOL bounds and report row → inverse roofline. Never raises on bad
input: a workload that fails any stage comes back with ``error`` naming the file and the problem,
and ``failed_stage`` which stage stopped it. The validation verdict gates everything downstream:
an IR that does not reproduce the golden outputs gets no bounds.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from solar_assets.asset_compute.graph import BOUND_NODES, HARDWARE_NODE, NODES, AssetNode, workload_nodes
from solar_assets.asset_compute.settings import AssetSettings
from solar_assets.asset_compute.worker import DRAWN_BY_CLI
from solar_assets.chain import stages
from solar_assets.chain.artifacts import WorkloadResult
from solar_assets.chain.config import RunConfig
from solar_assets.chain.run import DEFAULT_HARDWARE, DEFAULT_TIMEOUT_S, ChainState, Kept, unfinished_result
from solar_assets.errors import SolarError, with_path
from solar_assets.validate.errors import ValidationFailed

if TYPE_CHECKING:
    from collections.abc import Callable

    from solar_assets.measure import MeasureOptions

logger = logging.getLogger(__name__)


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

    def run(self, node: AssetNode, hardware: str | None = None) -> object:
        from solar_assets.progress import progress_listener

        def partition(name: str) -> tuple[str, str | None]:
            return (name, None) if NODES[name].partitioning == "workload" else (name, hardware)

        kwargs = {name: self.values[partition(name)] for name in node.inputs}
        if node.name in DRAWN_BY_CLI:
            kwargs["draw"] = False  # the plain path draws no graph or roofline of its own under $SOLAR_HOME
        if node.takes_key:
            kwargs["key"] = hardware if node.partitioning == "hardware" else self.key
        stages = NODE_STAGES[node.name]
        with self.state.timing(stages[0]), progress_listener(self.state.follow(stages)):
            value = node.fn(**kwargs, solar=self.settings).value
        self.values[partition(node.name)] = value
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
    from solar_assets.hardware import hardware_dir as default_hardware_dir
    from solar_assets.paths import solar_home
    from solar_assets.report import complete_row
    from solar_assets.report.per_op import per_op_rows
    from solar_assets.workloads.source import workload_name
    from solar_assets.workloads.training import train_name

    config = config or RunConfig.from_env()
    path = Path(path)
    result = WorkloadResult(workload=train_name(workload_name(path), config.train), path=str(path))
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
    try:
        for name in hardware_names:  # a spec that cannot be read stops the file before any tracing
            walk.run(HARDWARE_NODE, name)
        try:
            for node in workload_nodes():  # the on-demand ski-slope after the rows, when asked
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
                result.op_joins = stages.measure_ops(path, graph, result.per_op, result.rows, measure)
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

    from solar_assets.progress import FINISHED

    task_options = {"hardware_names": list(hardware_names), **options}
    results = run_in_workers(paths, _analyze_task, unfinished_result, cache_dir, jobs=max(1, jobs),
                             timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes, task_arg=task_options,
                             on_event=(lambda index, workload, stage: on_stage(workload, stage)) if on_stage else None,
                             on_result=(lambda index, result: on_stage(result.workload, FINISHED)) if on_stage else None,
                             durations=cache_dir)
    for result in results:
        result.mark_rows()
    return results


def _analyze_task(path: str, cache_dir: str | None, options: dict[str, object]) -> WorkloadResult:
    return analyze_workload(path, cache_dir=cache_dir, **options)  # type: ignore[arg-type]
