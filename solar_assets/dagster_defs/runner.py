"""Materialise the assets for a list of workload files: what ``solar analyze`` runs.

At most two Dagster runs per call, not one per partition (``docs/dagster.md``): the call's run, whose one
step (``call.analyse_workloads``) runs the worker processes (``solar_assets.workers``: the time and
memory limits, restored global state and captured output of the plain path) — each computes a
file's asset partitions with the assets' own functions — and logs every partition they computed
through Dagster's event API (``step_events``); then the report's run, ``headroom_report`` and its
checks, over every materialised partition (``call``). With ``--measure``, ``measured_runtime`` per workload ×
backend runs before the report. A failed asset or a killed worker is reported per workload (the
message names the file and the stage) and the other workloads carry on.

A file whose call record matches (``call_records``: nothing it depends on changed, its stored
values and the instance's latest materialisations are the recorded ones) gets no worker: a warm
call on unchanged files starts none. A call with nothing to compute or record starts no call run,
and no report run while the report is current (``call.report_is_current``): its stored rows and
its checks' recorded verdicts answer.

This module imports neither Dagster nor the assets at import time (``solar --no-dagster`` and the
warm path's record lookups do without them).

A Dagster database that cannot be read (corrupt, truncated, a table missing) raises
``DagsterStorageError``, one line naming the file and the remedy; ``solar analyze`` then runs the
same stages without Dagster, so the rows of that run still land in the report files.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solar_assets import pipeline
from solar_assets.progress import FINISHED, UNCHANGED
from solar_assets.stage_clock import WAITING, timed
from solar_assets.dagster_defs.instance import (  # noqa: F401 - the runner's storage, as callers import it
    DAGSTER_YAML,
    DAGSTER_YAML_MARK,
    QUIET_LOGGERS,
    STORAGE_STAGE,
    SQLITE_HEADER,
    DagsterStorageError,
    broken_databases,
    check_storage,
    dagster_home,
    fail_abandoned_runs,
    failure_message,
    home_lock,
    prepare_ui_instance,
    solar_instance,
    storage_guard,
)

if TYPE_CHECKING:  # Dagster and the assets are imported where used: the CLI starts its workers first
    import dagster as dg

    from ir_schemas import ReportRow
    from solar_assets.dagster_defs import call_records
    from solar_assets.measure import MeasureOptions
    from solar_assets.pipeline import WorkloadResult

log = logging.getLogger(__name__)

def analyze_with_dagster(paths: Sequence[str | Path], hardware_names: Sequence[str],
                         target_latency_s: float | None = None, home: str | Path | None = None,
                         failures: Sequence[str] = (), *, timeout_s: float | None = pipeline.DEFAULT_TIMEOUT_S,
                         memory_limit_bytes: int | None = None,
                         on_stage: Callable[[str, str], None] | None = None,
                         measure: MeasureOptions | None = None, checks: list[dg.AssetCheckEvaluation] | None = None,
                         record: bool = True, jobs: int = 1, notices: list[str] | None = None,
                         scale_out: ScaleOut | None = None,
                         ski_slope: bool = False, pictures: bool = False) -> tuple[list[WorkloadResult], list[ReportRow]]:
    """Materialise every asset for ``paths`` × ``hardware_names`` through Dagster; return
    per-workload results (``error`` set where a stage failed) and the ``headroom_report`` rows, in
    the order asked. ``failures``: errors found before any run (bad paths), listed in the report
    too.

    Two runs: the call's run (``call.run_analysis``), whose one step runs the workers — each
    file's assets computed in a worker process limited to ``timeout_s`` and ``memory_limit_bytes``
    (``asset_compute.worker.compute_workload``) — and logs every asset partition they computed;
    then the report's run, ``headroom_report`` and its checks (``call.report_call``). Neither
    runs when it would record nothing new: no file or spec to compute or record, and a report
    whose last run read what is materialised now with this call's failures and target.
    ``on_stage(workload, stage)`` as each stage starts.

    A file whose call record matches (``call_records``: same freshness key, stored values
    unchanged, and the instance's latest materialisations still the recorded ones) gets no
    worker and no event: its result is the record's, its rows the report's. ``record``: write the
    records of this call's fully successful files (False: read none, write none). ``jobs``: worker
    processes side by side (each file still alone in its worker). A file whose record holds but
    for some parts (a spec edited, a part new to it) gets no worker: only those parts' bound assets
    run, from its stored values; ``notices`` gets one line per such part. Raises
    ``DagsterStorageError`` when the instance's database cannot be used.

    ``scale_out``: the call's run on Dagster's Dask executor instead, one step per file on the
    cluster's worker processes (``call.run_distributed``); its files under ``$SOLAR_HOME/calls``,
    which every worker must see.

    ``ski_slope``: also the on-demand assets (``ski_slope``; ``asset_compute.graph.workload_nodes``),
    which a call otherwise leaves to the UI. ``pictures``: draw each einsum graph's and pair's roofline
    picture into the UI's metadata (else an entry says how to get it; the report's charts are drawn
    either way)."""
    import tempfile
    import uuid

    from solar_assets.asset_compute.settings import AssetSettings
    from solar_assets.asset_compute.keys import split_train_key, train_key
    from solar_assets.workloads.source import workload_name
    from solar_assets.workloads.training import train_name
    from solar_assets.asset_compute.workload_paths import assign_keys, remember_paths
    from solar_assets.chain.config import RunConfig
    from solar_assets.dagster_defs import call_records
    from solar_assets.workers import prestart, run_in_workers

    home_dir = pipeline.solar_home(home)
    check_storage(home_dir)
    workload_dir = pipeline.REPO_ROOT / "data" / "workloads"
    train = RunConfig.from_env().train
    keys = {p: train_key(k, train) for p, k in assign_keys([str(p) for p in paths], workload_dir, home_dir).items()}
    settings = AssetSettings.default(home_dir, workload_dir, target_latency_s=target_latency_s,
                                     workload_files={k: p for p, k in keys.items()})
    # decided before Dagster is imported: a file whose record matches starts no worker
    freshness = {p: call_records.freshness_key(p, k, target_latency_s, RunConfig.from_env(), home_dir / "cache")
                 for p, k in keys.items()} if record else {}
    specs = call_records.spec_versions(hardware_names, Path(settings.hardware_dir))
    from solar_assets.asset_compute.graph import WORKLOAD_NODES

    on_demand = [n.name for n in WORKLOAD_NODES if n.on_demand] if ski_slope else []
    hits = call_records.find_hits(home_dir, keys, freshness, specs, on_demand) if record else {}
    calls_dir = None
    if scale_out is not None:  # the steps elsewhere read and write the call's files: on the shared home
        calls_dir = home_dir / "calls"
        calls_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="solar-call-", dir=calls_dir) as call_dir, contextlib.ExitStack() as stack:
        options = {"home": str(home_dir), "settings": settings.as_dict(), "keys": keys,
                   "hardware": list(hardware_names), "inverse": target_latency_s is not None,
                   "call_dir": call_dir, "defer_pictures": True, "on_demand": ski_slope,
                   "pictures": pictures}
        # the workers start before Dagster is imported: their start (torch, numba) hides its import and the instance
        to_compute = [p for p in keys if p not in hits]
        started = prestart(_compute_workload, options, jobs=jobs, files=len(to_compute)) \
            if to_compute and scale_out is None else None
        if started is not None:
            stack.callback(started.close)
        from solar_assets.dagster_defs import call
        from solar_assets.dagster_defs.resources import SolarConfig

        base = SolarConfig(**settings.as_dict())
        call_id = uuid.uuid4().hex[:12]  # both runs of the call carry it (``call.CALL_TAG``)
        with storage_guard(home_dir), timed("call set-up (Dagster instance, preparation)"):
            instance = stack.enter_context(solar_instance(home_dir))
            with home_lock(home_dir):  # another call's registration or report run goes first
                remember_paths(home_dir, {split_train_key(k)[0]: p for p, k in keys.items()  # the sensor watches
                                          if Path(p).resolve().parent != workload_dir.resolve()})  # them from now on
                fail_abandoned_runs(instance)  # a call killed before: its run is not running
                prepared = call.prepare_call(instance, base, list(keys.values()), hardware_names)
                unverified = call_records.verify(instance, hits) if hits else set()
        driver = _CallDriver(keys, hits, unverified, prepared, options, settings, jobs=jobs, timeout_s=timeout_s,
                             memory_limit_bytes=memory_limit_bytes, on_stage=on_stage, started=started)
        with storage_guard(home_dir):
            if not prepared and not any(driver.work()):  # nothing to compute or record: a run would log nothing
                driver.note_unchanged()
            elif scale_out is None:
                with timed(WAITING + "the call's Dagster run, on its workers"):
                    call.run_analysis(instance, driver, home_dir, call_id)
            else:
                used = call.run_distributed(instance, driver, home_dir, call_id, scale_out, Path(call_dir))
                if notices is not None and used:
                    notices.append(_workers_notice(used))
        if driver.error is not None:
            raise driver.error
        computed, partial, bounded, file_events = driver.computed, driver.partial, driver.bounded, driver.file_events
        if partial and notices is not None:
            notices.extend(_bounds_notices(partial, bool(options["inverse"])))
        recorded = {p: h.record for p, h in hits.items() if p not in computed}
        results = [computed[p] if p in computed else _recorded_result(p, recorded[p], home_dir) for p in keys]
        if measure is not None:
            ok = [r.path for r in results if r.ok]
            measured = run_in_workers(ok, _materialize_measurements, pipeline.unfinished_result, None, jobs=1,
                                      timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes,
                                      task_arg={**options, "measure": measure})
            for result, outcome in zip([r for r in results if r.ok], measured):
                if outcome.error:
                    result.error = outcome.error
                result.op_joins = list(getattr(outcome, "op_joins", ()))
        storage = [r for r in results if r.failed_stage == STORAGE_STAGE]
        if storage:
            raise DagsterStorageError(storage[0].error)
        report_failures = [*failures, *(r.error for r in results if r.error)]
        with storage_guard(home_dir), home_lock(home_dir):
            fail_abandoned_runs(instance)  # a worker killed by a limit left its measurement run started
            # every materialised partition: the report is the whole table, this call's rows within it
            made = call_records.load_report_record(home_dir, report_failures, target_latency_s) if record else None
            if made is not None and call.report_is_current(instance, made.storage_id):
                # nothing it reads was materialised since its run, and its inputs are this call's: the same report
                every_row, evaluations = call.stored_report_rows(home_dir), list(made.checks)
                log.info("the report is current (nothing it reads was recorded since its run): not run again")
            else:
                start = time.perf_counter()
                with timed("report run (headroom_report, checks)"):
                    every_row, evaluations, report_id = call.report_call(instance, base, report_failures, call_id)
                log.debug("the report run took %.2f s", time.perf_counter() - start)
                if record and report_id is not None:
                    call_records.save_report_record(home_dir, report_id, report_failures, target_latency_s,
                                                    evaluations)
        if checks is not None:
            checks.extend(evaluations)
        storage_ids = {}
        if record and computed:  # the materialisations each record stands for, by storage id
            from solar_assets.dagster_defs.step_events import latest_storage_ids

            with storage_guard(home_dir):
                storage_ids = latest_storage_ids(instance, {p for path in computed for p in
                                                            call_records.record_partitions(file_events.get(path, ()))})
        for path, result in computed.items():  # the runs recorded them: a next call may skip these files
            settled = call_records.settled_freshness_key(
                freshness.get(path), path, keys[path], target_latency_s, RunConfig.from_env(),
                home_dir / "cache") if record and result.ok else None
            base_hit = partial.get(path) if path in bounded else None
            if settled is not None:
                call_records.save_record(home_dir, path, keys[path], settled, result.workload, file_events[path],
                                         result.per_op,
                                         {n: specs[n] for n in (base_hit.stale if base_hit else hardware_names)},
                                         storage_ids, result.activity, base_hit)
    order = {p: i for i, p in enumerate(keys)}
    wanted = {h: i for i, h in enumerate(hardware_names)}
    named = {p: train_name(workload_name(p), train) for p in keys}  # a file's step and forward pass: two rows
    rows = sorted((r for r in every_row if r.source in order and r.workload == named[r.source]
                   and r.hardware in wanted),
                  key=lambda r: (order[r.source], wanted[r.hardware]))
    for result in results:
        result.rows = [r for r in rows if r.source == result.path]
        result.mark_rows()
    return results, [r for result in results for r in result.rows if r.hardware in wanted]


@dataclasses.dataclass(frozen=True)
class ScaleOut:
    """``solar analyze --executor dask``: the call's run on Dagster's Dask executor (dagster-dask),
    one step per file. ``scheduler``: an existing Dask scheduler's address (its workers started
    with ``DASK_DISTRIBUTED__WORKER__DAEMON=False`` or ``--no-nanny``: a file's step starts the
    limited worker process); None: a local cluster of ``workers`` processes for this call."""

    scheduler: str | None = None
    workers: int = 2


def _workers_notice(used: dict[str, list[str]]) -> str:
    """One line: how many files each Dask worker ran."""
    files = sum(len(v) for v in used.values())
    each = ", ".join(f"{w}: {len(v)}" for w, v in sorted(used.items()))
    return f"dask: {files} file{'s' if files != 1 else ''} on {len(used)} worker{'s' if len(used) != 1 else ''} ({each})"


class _CallDriver:
    """What the call's Dagster step runs (``call.analyse_workloads``): the workers over the files
    without a matching record, the bound assets alone of the partly fresh ones, the pictures; then
    every partition event, in dependency order, through the step's ``StepEvents``. A storage error
    is kept for the caller (its message names the database), not turned into a failed step."""

    def __init__(self, keys: dict[str, str], hits: dict[str, call_records.Hit], unverified: set[str],
                 prepared: list[Any], options: dict[str, Any], settings: Any, *, jobs: int,
                 timeout_s: float | None, memory_limit_bytes: int | None,
                 on_stage: Callable[[str, str], None] | None, started: Any = None) -> None:
        self.keys, self.hits, self.unverified, self.prepared = keys, hits, unverified, prepared
        self.started = started  # workers spawned before Dagster was imported (``workers.prestart``)
        self.options, self.settings, self.jobs = options, settings, max(1, jobs)
        self.timeout_s, self.memory_limit_bytes, self.on_stage = timeout_s, memory_limit_bytes, on_stage
        self.computed: dict[str, WorkloadResult] = {}
        self.partial: dict[str, call_records.Hit] = {}
        self.bounded: dict[str, WorkloadResult] = {}
        self.file_events: dict[str, list[Any]] = {}
        self.error: BaseException | None = None

    def __getstate__(self) -> dict[str, Any]:
        """What a step elsewhere needs (``call.run_distributed`` ships the driver to each file's
        step): not the workers spawned here, nor the progress callback of this terminal."""
        return {**self.__dict__, "started": None, "on_stage": None}

    def work(self) -> tuple[list[str], list[str]]:
        """``(files to compute, files whose stale parts' bounds alone run)``, in the call's order:
        a file without a record, or whose record the instance contradicts, is computed."""
        compute = [p for p in self.keys if p not in self.hits or p in self.unverified]
        bounds = [p for p in self.keys if p in self.hits and self.hits[p].stale and p not in self.unverified]
        return compute, bounds

    def step_files(self) -> list[str]:
        """The files of ``work``, computed ones first: the ``i``-th is the ``i``-th file step's
        (``--executor dask``)."""
        compute, bounds = self.work()
        return compute + bounds

    def note_unchanged(self) -> None:
        """Progress for each file answered by its record (no step ran for it)."""
        for path in self.keys:
            if path not in self.computed and self.on_stage:
                self.on_stage(self.hits[path].record.workload, UNCHANGED)
                self.on_stage(self.hits[path].record.workload, FINISHED)

    def run(self, context: Any, events: Any) -> None:
        from solar_assets.dagster_defs.instance import DagsterStorageError as StorageError

        try:
            self.log_prepared(events)
            self.run_files(context, events, *self.work())
            self.note_unchanged()
        except StorageError as e:
            self.error = e

    def log_prepared(self, events: Any) -> None:
        """The files' observations and the parts' specs, before what reads them."""
        events.log(self.prepared)

    def _compute(self, files: list[str], pictures: Any,
                 on_file: Callable[[str, WorkloadResult], None] | None = None) -> dict[str, WorkloadResult]:
        from solar_assets.asset_compute.worker import events_file
        from solar_assets.workers import run_in_workers as workers

        if not files:  # every file recorded: no worker at all
            return {}
        call_dir, on_stage = self.options["call_dir"], self.on_stage

        def landed(index: int, result: WorkloadResult) -> None:
            pictures.submit(events_file(call_dir, files[index]))
            if on_file is not None:
                on_file(files[index], result)
            if on_stage:
                on_stage(result.workload, FINISHED)

        return dict(zip(files, workers(
            files, _compute_workload, pipeline.unfinished_result, None, jobs=self.jobs, timeout_s=self.timeout_s,
            memory_limit_bytes=self.memory_limit_bytes, task_arg=self.options, started=self.started,
            on_result=landed, durations=Path(self.options["home"]) / "cache",
            on_event=(lambda index, workload, stage: on_stage(workload, stage)) if on_stage else None)))

    def run_files(self, context: Any, events: Any, compute: list[str], bounds: list[str]) -> None:
        """``compute`` in the workers, the stale parts' bounds of ``bounds`` here, their pictures
        drawn meanwhile (in a process of their own when bounds run here: ``Pictures``); each
        file's partition events logged through ``events`` as the file lands (with ``--pictures``,
        and for ``bounds``, after the workers: each picture's asset when drawn)."""
        from solar_assets.asset_compute.pictures import Pictures, not_drawn
        from solar_assets.asset_compute.worker import DRAWN_BY_CLI, events_file
        from solar_assets.dagster_defs.call import worker_events

        call_dir = self.options["call_dir"]
        drawing = bool(self.options.get("pictures"))
        pictures = Pictures(self.settings, DRAWN_BY_CLI if drawing else (), own_process=bool(bounds) and drawing)
        counts: dict[str, int] = {}

        def log_now(path: str, result: WorkloadResult) -> None:
            """A file's events as it lands, while the workers go on (logged after the last file, the
            ~6,700 events of KernelBench's 270 files were a minute with one core busy). With
            ``--pictures`` a file's events wait for its pictures: logged after the workers."""
            self.file_events[path] = not_drawn(worker_events(call_dir, path, self.keys[path], result), DRAWN_BY_CLI)
            events.prefetch(self.file_events[path])
            counts.update(events.log_files({path: self.file_events[path]}, lambda p: self.file_events[p],
                                           DRAWN_BY_CLI))

        try:
            computed = self._compute(compute, pictures, None if drawing else log_now)
            partial = {p: self.hits[p] for p in bounds}
            bounded = _bounds_only(partial, self.options, pictures, self.on_stage)
            computed.update(bounded)
            self.partial.update(partial)
            self.bounded.update(bounded)
            self.computed.update(computed)
            later = [p for p in computed if p not in counts]
            for path in later:  # as the workers wrote them: the pictures come with ``settle``
                self.file_events[path] = worker_events(call_dir, path, self.keys[path], computed[path])
            events.prefetch(e for path in later for e in self.file_events[path])

            def settle(path: str) -> list[Any]:
                pictures.wait(events_file(call_dir, path))
                events_of = worker_events(call_dir, path, self.keys[path], computed[path])
                self.file_events[path] = events_of if drawing else not_drawn(events_of, DRAWN_BY_CLI)
                return self.file_events[path]

            ordered = [p for p in self.keys if p in computed]
            counts.update(events.log_files({p: self.file_events[p] for p in ordered if p in later}, settle,
                                           DRAWN_BY_CLI))
        finally:
            pictures.join()
        for path in ordered:
            result = computed[path]
            context.log.info(f"{path}: {counts[path]} asset partitions" + (f"; {result.error}" if result.error else ""))

    def outcome(self, path: str) -> FileOutcome:
        """What this driver did for ``path`` (a step elsewhere returns it to the call's driver)."""
        return FileOutcome(path, self.computed[path], self.file_events[path], self.partial.get(path),
                           path in self.bounded)

    def absorb(self, outcome: FileOutcome) -> None:
        """A file done by a step elsewhere (``outcome``), as if done here."""
        self.computed[outcome.path] = outcome.result
        self.file_events[outcome.path] = outcome.events
        if self.on_stage:
            self.on_stage(outcome.result.workload, FINISHED)
        if outcome.partial is not None:
            self.partial[outcome.path] = outcome.partial
        if outcome.bounded:
            self.bounded[outcome.path] = outcome.result


@dataclasses.dataclass
class FileOutcome:
    """One file's share of a call, done by its own step (``--executor dask``)."""

    path: str
    result: WorkloadResult
    events: list[Any]
    partial: call_records.Hit | None
    bounded: bool
    worker: str = ""  # the Dask worker whose step did it


def _bounds_only(partial: dict[str, call_records.Hit], options: dict[str, Any], pictures: Any,
                 on_stage: Callable[[str, str], None] | None) -> dict[str, WorkloadResult]:
    """The bound assets of each partly fresh file on its stale parts only, in this process (no
    workload code runs: ``asset_compute.worker.compute_bounds``); each result with the record's
    per-op rows of its other parts and what its run did outside its lane."""
    from solar_assets.asset_compute.worker import compute_bounds, events_file
    from solar_assets.dagster_defs import call_records

    out = {}
    for path, hit in partial.items():
        if on_stage:
            on_stage(hit.record.workload, f"bounds again on {', '.join(hit.stale)} (the rest unchanged)")
        result = compute_bounds(path, options, hit.stale)
        pictures.submit(events_file(options["call_dir"], path))
        kept = call_records.read_per_op(call_records.per_op_file(Path(options["home"]), hit.record.workload_key))
        result.per_op = [*(r for r in kept or () if r.hardware not in hit.stale), *result.per_op]
        result.activity = list(hit.record.activity)
        out[path] = result
        if on_stage:
            on_stage(hit.record.workload, FINISHED)
    return out


def _bounds_notices(partial: dict[str, call_records.Hit], inverse: bool) -> list[str]:
    """One line per part whose bounds alone ran again: why, and for how many files."""
    from solar_assets.asset_compute.graph import BOUND_NODES

    names = ", ".join(n.name for n in BOUND_NODES if inverse or n.name != "inverse_roofline")
    lines = []
    for name in dict.fromkeys(n for h in partial.values() for n in h.stale):
        hits = [h for h in partial.values() if name in h.stale]
        changed = sum(1 for h in hits if name in h.record.hardware)
        why = (f"{name}'s spec changed since the last call" if changed == len(hits) else
               f"{name} is new to these files" if not changed else f"{name} changed or is new")
        lines.append(f"{why}: only its bound assets ({names}) ran again, for "
                     f"{len(hits)} workload{'s' if len(hits) != 1 else ''}; no trace, golden run or validation")
    return lines


def _recorded_result(path: str, record: call_records.CallRecord, home: Path) -> WorkloadResult:
    """The result of a file answered from its call record: no error, the recorded per-op rows
    named by their file and digest, read when a report needs them (its rows come from the
    report, as the others')."""
    from solar_assets.dagster_defs import call_records

    return pipeline.WorkloadResult(workload=record.workload, path=path, activity=list(record.activity),
                                   per_op_file=str(call_records.per_op_file(home, record.workload_key)),
                                   per_op_digest=record.per_op_digest)


def _compute_workload(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """The workers' task (``asset_compute.worker.compute_workload``: no Dagster in a worker)."""
    from solar_assets.asset_compute.worker import compute_workload

    return compute_workload(path, cache_dir, options)


def _materialize_measurements(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    from solar_assets.dagster_defs.call import materialize_measurements

    return materialize_measurements(path, cache_dir, options)



