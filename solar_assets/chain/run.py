"""The chain's shared pieces: where a workload is (``ChainState``: the stage a failure is charged
to, the seconds of each), the part up to the verdict (``validate_ir``: what ``solar coverage`` runs;
``golden_at`` / ``validate_at``: what the golden and validation assets call), the measurement in
workers and the result of a killed worker. The whole chain over a file, composed from the one
declaration of the asset graph, is ``asset_compute.plain.analyze_workload``.

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

from solar_assets.chain import stages
from solar_assets.chain.artifacts import SizeChoice, WorkloadResult
from solar_assets.chain.config import RunConfig
from solar_assets.errors import SolarError, with_path
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
    result = WorkloadResult(workload=run_name(path), path=path)
    state = ChainState(result.seconds)
    try:
        with state.timing("measure"):
            result.rows = stages.measure_rows(path, arg["rows"][path], arg["measure"])  # type: ignore[index]
    except SolarError as e:
        result.error, result.failed_stage = with_path(str(e), path), "measure"
    except Exception as e:  # as in analyze_workload: one line naming the file and the stage
        result.error, result.failed_stage = f"{path}: measure failed unexpectedly: {type(e).__name__}: {e}", "measure"
    return result


def run_name(path: str | Path) -> str:
    """The workload's name in this run's results: ``stem[train]`` when the run bounds training steps
    (the options ``solar`` exported for its processes: ``RunConfig.from_env``)."""
    from solar_assets.workloads.source import workload_name
    from solar_assets.workloads.training import train_name

    return train_name(workload_name(path), RunConfig.from_env().train)


def unfinished_result(path: str | Path, message: str, seconds: float, last_event: str | None) -> WorkloadResult:
    """The result of a workload whose worker was killed (time or memory limit) or died: the
    message says why and during which stage (``last_event``: "trace", "golden at BATCH=3", ...)."""
    where = f" during {last_event}" if last_event else ("" if last_event == "" else " before its first stage")
    stage = last_event.split(" ", 1)[0] if last_event else None
    return WorkloadResult(workload=run_name(path), path=str(path), error=with_path(message + where, path),
                          failed_stage=stage, seconds={"unfinished": seconds})
