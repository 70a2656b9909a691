"""Materialise the assets for a list of workload files: what ``solar analyze`` runs.

One Dagster run per call, not one per partition (``docs/dagster.md``): the worker process
(``solar_assets.workers``: the time and memory limits, restored global state and captured output
of the plain path) computes each file's asset partitions with the assets' own functions, one
file after another, while a thread of this process imports Dagster and prepares the instance;
then one in-process run of ``headroom_report`` and its checks records every partition's
materialisation (or failure) and writes the report of every materialised partition
(``assets.call``, ``assets.batch``). With ``--measure``, ``measured_runtime`` per workload ×
backend runs before the report. A failed asset or a killed worker is reported per workload (the
message names the file and the stage) and the other workloads carry on.

A file whose call record matches (``call_records``: nothing it depends on changed, its stored
values and the instance's latest materialisations are the recorded ones) gets no worker: a warm
call on unchanged files starts none.

This module imports neither Dagster nor the assets at import time, so the CLI's worker starts
first (Dagster's import and the instance cost seconds the worker's own start-up hides).

A Dagster database that cannot be read (corrupt, truncated, a table missing) raises
``DagsterStorageError``, one line naming the file and the remedy; ``solar analyze`` then runs the
same stages without Dagster, so the rows of that run still land in the report files.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solar_assets import pipeline
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
from solar_assets.errors import SolarError

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
                         record: bool = True, jobs: int = 1,
                         notices: list[str] | None = None) -> tuple[list[WorkloadResult], list[ReportRow]]:
    """Materialise every asset for ``paths`` × ``hardware_names`` in **one** Dagster run; return
    per-workload results (``error`` set where a stage failed) and the ``headroom_report`` rows, in
    the order asked. ``failures``: errors found before any run (bad paths), listed in the report
    too. Each file's assets are computed in a worker process limited to ``timeout_s`` and
    ``memory_limit_bytes`` (``asset_compute.worker.compute_workload``); meanwhile a thread of this process
    imports Dagster and prepares the instance (``call.prepare_call``); then the run of
    ``headroom_report`` and its checks records every partition event of the call and writes the
    report (``call.report_call``). ``on_stage(workload, stage)`` as each stage starts.

    A file whose call record matches (``call_records``: same freshness key, stored values
    unchanged, and the instance's latest materialisations still the recorded ones) gets no
    worker and records no event: its result is the record's, its rows the report's. ``record``:
    write the records of this call's fully successful files (False: read none, write none).
    ``jobs``: worker processes side by side (each file still alone in its worker). A file whose
    record holds but for some parts (a spec edited, a part new to it) gets no worker: only those
    parts' bound assets run, from its stored values; ``notices`` gets one line per such part.
    Raises ``DagsterStorageError`` when the instance's database cannot be used."""
    import tempfile
    import threading

    from solar_assets.asset_compute.keys import workload_key
    from solar_assets.asset_compute.pictures import PictureThread
    from solar_assets.asset_compute.settings import AssetSettings
    from solar_assets.asset_compute.workload_paths import remember_paths
    from solar_assets.asset_compute.worker import DRAWN_BY_CLI, events_file
    from solar_assets.chain.config import RunConfig
    from solar_assets.dagster_defs import call_records
    from solar_assets.workers import run_in_workers

    home_dir = pipeline.solar_home(home)
    check_storage(home_dir)
    workload_dir = pipeline.REPO_ROOT / "data" / "workloads"
    keys = {str(p): workload_key(p, workload_dir) for p in paths}
    settings = AssetSettings.default(home_dir, workload_dir, target_latency_s=target_latency_s,
                                     workload_files={k: p for p, k in keys.items()})
    # decided before Dagster is imported: a file whose record matches starts no worker
    freshness = {p: call_records.freshness_key(p, k, target_latency_s, RunConfig.from_env(), home_dir / "cache")
                 for p, k in keys.items()} if record else {}
    specs = call_records.spec_versions(hardware_names, Path(settings.hardware_dir))
    hits = call_records.find_hits(home_dir, keys, freshness, specs) if record else {}
    with tempfile.TemporaryDirectory(prefix="solar-call-") as call_dir, contextlib.ExitStack() as stack:
        prepared: dict[str, Any] = {}

        def prepare() -> None:  # Dagster's imports and the instance, while the first worker starts
            try:
                from solar_assets.dagster_defs import call
                from solar_assets.dagster_defs.resources import SolarConfig

                config = SolarConfig(**settings.as_dict())
                with storage_guard(home_dir):
                    instance = stack.enter_context(solar_instance(home_dir))
                    with home_lock(home_dir):  # another call's registration or report run goes first
                        remember_paths(home_dir, {k: p for p, k in keys.items()  # the sensor watches them from now on
                                                  if Path(p).resolve().parent != workload_dir.resolve()})
                        fail_abandoned_runs(instance)  # a call killed before: its run is not running
                        prepared.update(call=call, base=config, instance=instance,
                                        events=call.prepare_call(instance, config, list(keys.values()),
                                                                 hardware_names),
                                        unverified=call_records.verify(instance, hits) if hits else set())
            except BaseException as e:  # re-raised in the caller's thread
                prepared["error"] = e

        thread = threading.Thread(target=prepare, name="solar-dagster-prepare", daemon=True)
        thread.start()
        pictures = PictureThread(settings, DRAWN_BY_CLI)  # drawn while the worker goes on
        options = {"home": str(home_dir), "settings": settings.as_dict(), "keys": keys,
                   "hardware": list(hardware_names), "inverse": target_latency_s is not None,
                   "call_dir": call_dir, "defer_pictures": True}

        def compute(files: list[str]) -> dict[str, WorkloadResult]:
            if not files:  # every file recorded: no worker at all
                return {}
            return dict(zip(files, run_in_workers(
                files, _compute_workload, pipeline.unfinished_result, None, jobs=max(1, jobs), timeout_s=timeout_s,
                memory_limit_bytes=memory_limit_bytes, task_arg=options,
                on_result=lambda index, _: pictures.submit(events_file(call_dir, files[index])),
                on_event=(lambda index, workload, stage: on_stage(workload, stage)) if on_stage else None)))

        computed = compute([p for p in keys if p not in hits])  # a stale part alone is bounded below
        waited = time.perf_counter()
        thread.join()
        log.debug("the Dagster preparation finished %.2f s after the workers", time.perf_counter() - waited)
        if "error" in prepared:
            raise prepared["error"]
        call, instance, events = prepared["call"], prepared["instance"], prepared["events"]
        again = [p for p in keys if p in prepared["unverified"]]  # the instance contradicts the record
        if again:
            log.debug("%d recorded file(s) failed verification against the instance: computed", len(again))
            computed.update(compute(again))
        partial = {p: h for p, h in hits.items() if h.stale and p not in computed}
        bounded = _bounds_only(partial, options, pictures, on_stage)
        if partial and notices is not None:
            notices.extend(_bounds_notices(partial, bool(options["inverse"])))
        computed.update(bounded)
        waited = time.perf_counter()
        pictures.join()
        log.debug("the pictures finished %.2f s after the workers", time.perf_counter() - waited)
        recorded = {p: h.record for p, h in hits.items() if p not in computed}
        for path, hit in recorded.items():
            if on_stage:
                on_stage(hit.workload, "unchanged since the last call")
        results = [computed[p] if p in computed else _recorded_result(p, recorded[p]) for p in keys]
        file_events = {p: call.worker_events(call_dir, p, keys[p], computed[p]) for p in keys if p in computed}
        for path in keys:
            events += file_events.get(path, [])
        if measure is not None:
            bounded = [r.path for r in results if r.ok]
            measured = run_in_workers(bounded, _materialize_measurements, pipeline.unfinished_result, None, jobs=1,
                                      timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes,
                                      task_arg={**options, "measure": measure})
            for result, outcome in zip([r for r in results if r.ok], measured):
                if outcome.error:
                    result.error = outcome.error
        storage = [r for r in results if r.failed_stage == STORAGE_STAGE]
        if storage:
            raise DagsterStorageError(storage[0].error)
        record_file = Path(call_dir) / "events.pickle"
        call.write_events(record_file, events)
        with storage_guard(home_dir), home_lock(home_dir):
            fail_abandoned_runs(instance)  # a worker killed by a limit left its measurement run started
            # every materialised partition: the report is the whole table, this call's rows within it
            start = time.perf_counter()
            every_row, evaluations = call.report_call(instance, prepared["base"], record_file,
                                                      [*failures, *(r.error for r in results if r.error)])
            log.debug("the report run took %.2f s", time.perf_counter() - start)
        if checks is not None:
            checks.extend(evaluations)
        for path, result in computed.items():  # the run recorded them: a next call may skip these files
            settled = call_records.settled_freshness_key(
                freshness.get(path), path, keys[path], target_latency_s, RunConfig.from_env(),
                home_dir / "cache") if record and result.ok else None
            base = partial.get(path) if path in bounded else None
            if settled is not None:
                call_records.save_record(home_dir, path, keys[path], settled, result.workload, file_events[path],
                                         result.per_op, {n: specs[n] for n in (base.stale if base else hardware_names)},
                                         result.activity, base)
    order = {p: i for i, p in enumerate(keys)}
    wanted = {h: i for i, h in enumerate(hardware_names)}
    rows = sorted((r for r in every_row if r.source in order and r.hardware in wanted),
                  key=lambda r: (order[r.source], wanted[r.hardware]))
    for result in results:
        result.rows = [r for r in rows if r.source == result.path]
        result.mark_rows()
    return results, [r for result in results for r in result.rows if r.hardware in wanted]


def _bounds_only(partial: dict[str, call_records.Hit], options: dict[str, Any], pictures: Any,
                 on_stage: Callable[[str, str], None] | None) -> dict[str, WorkloadResult]:
    """The bound assets of each partly fresh file on its stale parts only, in this process (no
    workload code runs: ``asset_compute.worker.compute_bounds``); each result with the record's
    per-op rows of its other parts and what its run did outside its lane."""
    from solar_assets.asset_compute.worker import compute_bounds, events_file

    out = {}
    for path, hit in partial.items():
        if on_stage:
            on_stage(hit.record.workload, f"bounds again on {', '.join(hit.stale)} (the rest unchanged)")
        result = compute_bounds(path, options, hit.stale)
        pictures.submit(events_file(options["call_dir"], path))
        result.per_op = [*(r for r in hit.record.per_op if r.hardware not in hit.stale), *result.per_op]
        result.activity = list(hit.record.activity)
        out[path] = result
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


def _recorded_result(path: str, record: call_records.CallRecord) -> WorkloadResult:
    """The result of a file answered from its call record: no error, the recorded per-op rows
    (its rows come from the report, as the others')."""
    return pipeline.WorkloadResult(workload=record.workload, path=path, per_op=list(record.per_op),
                                   activity=list(record.activity))


def _compute_workload(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """The workers' task (``asset_compute.worker.compute_workload``: no Dagster in a worker)."""
    from solar_assets.asset_compute.worker import compute_workload

    return compute_workload(path, cache_dir, options)


def _materialize_measurements(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    from solar_assets.dagster_defs.call import materialize_measurements

    return materialize_measurements(path, cache_dir, options)



