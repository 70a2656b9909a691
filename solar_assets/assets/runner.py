"""Materialise the assets for a list of workload files: what ``solar analyze`` runs.

One ``dg.materialize`` per partition (workload; then workload × hardware) on the embedded Dagster
instance under ``$SOLAR_HOME/dagster``; with ``--measure``, ``measured_runtime`` per workload ×
backend; then ``headroom_report`` (every materialised partition) with its asset checks, in one run. The per-workload materialisations, where the workload's own code runs, happen
in a worker process (``solar_assets.workers``: the time and memory limits, restored global state
and captured output of the plain path), one file after another; the hardware specs and the report,
which run no workload code, in this process. A failed step or a killed worker is reported per
workload (the message names the file and the stage) and the other workloads carry on.

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
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from ir_schemas import ReportRow
from solar_assets import pipeline
from solar_assets.assets.batch import (
    Partition,
    PartitionEvent,
    compute,
    latest_versions,
    load_value,
    read_batch,
    store_value,
    upstream_failed,
    write_batch,
)
from solar_assets.assets.checks import REPORT_CHECKS
from solar_assets.assets.partitions import (
    hardware_partitions,
    register_partitions,
    workload_hardware_key,
    workload_key,
    workload_partitions,
)
from solar_assets.assets.resources import SolarConfig
from solar_assets.assets.sources import SOURCE_ASSETS, hardware_file, observe_sources, workload_file
from solar_assets.assets.stages import ASSETS, WORKLOAD_ASSETS, hardware_spec, headroom_report, measured_runtime
from solar_assets.assets.stages import cache_aware_bound as cache_aware_bound_asset
from solar_assets.assets.stages import inverse_roofline as inverse_roofline_asset
from solar_assets.assets.stages import sol_bounds as sol_bounds_asset
from solar_assets.errors import SolarError
from solar_assets.pipeline import WorkloadResult

log = logging.getLogger(__name__)

DAGSTER_YAML = """\
# solar's embedded Dagster instance: SQLite storage in this directory (written by solar).
telemetry:
  enabled: false
# no "join the community" pop-up over the UI of a local tool
nux:
  enabled: false
# Keep Dagster's per-file debug lines ("Loading partition ...", "Writing file at ...") out of
# the event log: each stored event costs a SQLite write, and they double a run's events.
python_logs:
  python_log_level: INFO
# One run at a time: two runs of torch / numba / GLPK on a small machine only slow each other
# down, and the queue keeps the order runs were requested in (upstream first).
concurrency:
  runs:
    max_concurrent_runs: 1
# One event-log database for every run (WAL journal), not Dagster's default of a new SQLite file
# per run: creating and migrating that file cost ~0.6 s of each run (docs/dagster.md, overhead).
event_log_storage:
  module: dagster._core.storage.event_log
  class: ConsolidatedSqliteEventLogStorage
  config:
    base_dir: {history}
"""
DAGSTER_YAML_MARK = "# solar's embedded Dagster instance"
# Dagster's console logger would repeat every failure with a stack trace: the CLI reports them itself.
QUIET_LOGGERS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
STORAGE_STAGE = "dagster storage"  # failed_stage of a result whose Dagster database failed
SQLITE_HEADER = b"SQLite format 3\x00"


class DagsterStorageError(SolarError):
    """The embedded Dagster instance's SQLite storage cannot be used; the message names the file."""


def _storage_remedy(home: Path) -> str:
    return (f"remove it (or all of {home / 'dagster'}: Dagster's run history, not solar's caches), "
            "or run with --no-dagster")


def broken_databases(home: Path) -> list[tuple[Path, str]]:
    """``(file, why)`` for each SQLite file under ``$SOLAR_HOME/dagster`` that is not a readable
    database: wrong header, truncated, failing SQLite's quick check."""
    broken = []
    for db in sorted((home / "dagster").rglob("*.db")):
        try:
            with db.open("rb") as f:
                header = f.read(len(SQLITE_HEADER))
            if header and header != SQLITE_HEADER:
                broken.append((db, "file is not a database"))
                continue
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
                verdict = conn.execute("PRAGMA quick_check").fetchone()
            if verdict and verdict[0] != "ok":
                broken.append((db, f"SQLite quick check: {verdict[0]}"))
        except (OSError, sqlite3.Error) as e:
            broken.append((db, f"{type(e).__name__}: {e}"))
    return broken


def _is_storage_failure(error: BaseException) -> bool:
    """An exception whose chain holds a SQLite / SQLAlchemy database error (``file is not a
    database``, ``NoSuchTableError: runs``) or Dagster's schema errors."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        module = type(error).__module__ or ""
        if isinstance(error, sqlite3.Error) or module.startswith("sqlalchemy") or \
                type(error).__name__ in ("DagsterInstanceSchemaOutdated", "DagsterInstanceMigrationRequired"):
            return True
        error = error.__cause__ or error.__context__
    return False


@contextlib.contextmanager
def storage_guard(home: Path) -> Iterator[None]:
    """Turn a failure of the Dagster database into one ``DagsterStorageError`` line naming the
    file (the first broken one found, else the directory) and what to do."""
    try:
        yield
    except DagsterStorageError:
        raise
    except Exception as e:
        if not _is_storage_failure(e):
            raise
        broken = broken_databases(home)
        where, why = broken[0] if broken else (home / "dagster", pipeline.one_line(f"{type(e).__name__}: {e}")[:200])
        raise DagsterStorageError(f"{where}: the Dagster database cannot be used ({why}); "
                                  f"{_storage_remedy(home)}") from None


def check_storage(home: Path) -> None:
    """Raise ``DagsterStorageError`` for the first broken database file, before any run."""
    broken = broken_databases(home)
    if broken:
        where, why = broken[0]
        raise DagsterStorageError(f"{where}: the Dagster database cannot be used ({why}); {_storage_remedy(home)}")


def dagster_home(home: Path) -> Path:
    """``$SOLAR_HOME/dagster`` with a ``dagster.yaml`` (telemetry off), created if missing."""
    path = home / "dagster"
    path.mkdir(parents=True, exist_ok=True)
    config = path / "dagster.yaml"
    text = DAGSTER_YAML.format(history=json.dumps(str(path.resolve() / "history")))
    if not config.exists() or (config.read_text().startswith(DAGSTER_YAML_MARK) and config.read_text() != text):
        config.write_text(text)  # solar's own file is kept current; a user's is left alone
    return path


def prepare_ui_instance(home: Path) -> None:
    """Before ``solar ui``: ``dagster.yaml`` in place, the shipped workload and hardware files
    registered as partitions and observed (the ``source_files`` sensor keeps that up to date)."""
    from solar_assets.assets.sensors import new_partitions

    config = SolarConfig.default(home)
    with solar_instance(home) as instance:
        workloads, hardware = new_partitions(instance, config)
        register_partitions(instance, workloads, hardware)
        observe_sources(instance, config)


def solar_instance(home: Path) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_config(str(dagster_home(home)))


def failure_message(result: dg.ExecuteInProcessResult, path: str | Path) -> str:
    """One line naming the file: the Failure's description, or the user exception's message."""
    for event in result.get_step_failure_events():
        data = event.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            return pipeline.with_path(data.user_failure_data.description, path)
        error = data.error
        while error is not None and error.cause is not None:
            error = error.cause
        text = error.message if error is not None else "unknown error"
        return pipeline.with_path(f"{event.step_key} failed unexpectedly: {text}", path)
    return pipeline.with_path("the Dagster run failed without a step failure", path)


def _materialize(instance: dg.DagsterInstance, config: SolarConfig, selection: Sequence[Any],
                 partition_key: str | None = None, run_config: dict[str, Any] | None = None,
                 tags: dict[str, str] | None = None) -> dg.ExecuteInProcessResult:
    from solar_assets.definitions import resources_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.materialize([*SOURCE_ASSETS, *ASSETS, *REPORT_CHECKS], selection=list(selection), partition_key=partition_key,
                              instance=instance, resources=resources_for(config),
                              run_config={**QUIET_LOGGERS, **(run_config or {})}, raise_on_error=False,
                              tags={"solar/cli": "analyze", **(tags or {})})


def analyze_with_dagster(paths: Sequence[str | Path], hardware_names: Sequence[str],
                         target_latency_s: float | None = None, home: str | Path | None = None,
                         failures: Sequence[str] = (), *, timeout_s: float | None = pipeline.DEFAULT_TIMEOUT_S,
                         memory_limit_bytes: int | None = None,
                         on_stage: Callable[[str, str], None] | None = None,
                         measure: Any = None, checks: list[dg.AssetCheckEvaluation] | None = None,
                         ) -> tuple[list[WorkloadResult], list[ReportRow]]:
    """Materialise every asset for ``paths`` × ``hardware_names`` in **one** Dagster run; return
    per-workload results (``error`` set where a stage failed) and the ``headroom_report`` rows, in
    the order asked. ``failures``: errors found before any run (bad paths), listed in the report
    too. Each file's assets are computed in a worker process limited to ``timeout_s`` and
    ``memory_limit_bytes`` (``solar_assets.assets.batch``: the assets' own functions, values in
    the IO manager's storage); the run of ``headroom_report`` and its checks records them all
    first. ``on_stage(workload, stage)`` as each stage starts. Raises ``DagsterStorageError`` when
    the instance's database cannot be used."""
    import tempfile

    from solar_assets.workers import run_in_workers

    home_dir = pipeline.solar_home(home)
    base = SolarConfig.default(home_dir, target_latency_s=target_latency_s)
    keys = {str(p): workload_key(p, base.workload_dir) for p in paths}
    config = base.model_copy(update={"workload_files": {k: p for p, k in keys.items()}})
    check_storage(home_dir)
    with tempfile.TemporaryDirectory(prefix="solar-call-") as call_dir:
        with storage_guard(home_dir), solar_instance(home_dir) as instance:
            register_partitions(instance, list(keys.values()), list(hardware_names))
            # the files' hashes first: what is recorded below is then fresh against them in the UI
            events = source_observations(instance, config, list(keys.values()), list(hardware_names))
        hardware_events, hardware_errors = _hardware_specs(config, hardware_names)
        events += hardware_events
        options = {"home": str(home_dir), "config": config.model_dump(), "keys": keys,
                   "hardware": list(hardware_names), "hardware_errors": hardware_errors,
                   "inverse": target_latency_s is not None, "call_dir": call_dir}
        results = run_in_workers(list(keys), _compute_workload, pipeline.unfinished_result, None, jobs=1,
                                 timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes, task_arg=options,
                                 on_event=(lambda index, workload, stage: on_stage(workload, stage)) if on_stage else None)
        for path, result in zip(keys, results):
            events += _worker_events(call_dir, path, keys[path], result)
        if measure is not None:
            bounded = [r.path for r in results if r.ok]
            measured = run_in_workers(bounded, _materialize_measurements, pipeline.unfinished_result, None, jobs=1,
                                      timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes,
                                      task_arg={**options, "measure": measure})
            for result, outcome in zip([r for r in results if r.ok], measured):
                if outcome.error:
                    result.error = outcome.error
        record_file = Path(call_dir) / "events.pickle"
        write_batch(record_file, events)
        with storage_guard(home_dir), solar_instance(home_dir) as instance:
            _fail_abandoned_runs(instance, results)
            # every materialised partition: the report is the whole table, this call's rows within it
            report_config = {"failures": [*failures, *(r.error for r in results if r.error)],
                             "record_file": str(record_file)}
            run = _materialize(instance, base, [headroom_report],
                               run_config={"ops": {"headroom_report": {"config": report_config}}})
            if not run.success:
                raise SolarError(failure_message(run, home_dir / "reports"))
            every_row: list[ReportRow] = run.output_for_node("headroom_report")
            if checks is not None:
                checks.extend(run.get_asset_check_evaluations())
    order = {p: i for i, p in enumerate(keys)}
    wanted = {h: i for i, h in enumerate(hardware_names)}
    rows = sorted((r for r in every_row if r.source in order and r.hardware in wanted),
                  key=lambda r: (order[r.source], wanted[r.hardware]))
    for result in results:
        result.rows = [r for r in rows if r.source == result.path]
    return results, rows


def source_observations(instance: dg.DagsterInstance, config: SolarConfig, workloads: Sequence[str],
                        hardware: Sequence[str]) -> list[PartitionEvent]:
    """An observation of each given workload / hardware file whose hash differs from its last one
    (what the ``source_files`` sensor would observe), to be recorded before what depends on it."""
    from solar_assets.assets.sources import hardware_file_versions, workload_file_versions

    events = []
    for asset, versions in ((workload_file, workload_file_versions(config, list(workloads))),
                            (hardware_file, hardware_file_versions(config, list(hardware)))):
        seen = latest_versions(instance, asset.key, list(versions), observation=True)
        events += [PartitionEvent(Partition(asset.key.path[-1], k), None, data_version=v, observation=True)
                   for k, v in versions.items() if seen.get(k, (None,))[0] != v]
    return events


def _hardware_specs(config: SolarConfig, names: Sequence[str]) -> tuple[list[PartitionEvent], dict[str, str]]:
    """``hardware_spec`` of each name, computed here (no workload code: a YAML), its value stored
    for the workers and the report; ``(events, {name: error})``."""
    events, errors = [], {}
    for name in names:
        partition = Partition(hardware_spec.key.path[-1], name)
        event, value = compute(hardware_spec, partition, {}, {"solar": config},
                               [Partition(hardware_file.key.path[-1], name)])
        events.append(event)
        if event.error is not None:
            errors[name] = pipeline.with_path(event.error, Path(config.hardware_dir) / f"{name}.yaml")
        else:
            store_value(config.home, partition, value)
    return events, errors


def _events_file(call_dir: str, path: str) -> Path:
    import hashlib

    return Path(call_dir) / f"{hashlib.sha256(path.encode()).hexdigest()[:16]}.pickle"


def _worker_events(call_dir: str, path: str, key: str, result: WorkloadResult) -> list[PartitionEvent]:
    """The events a worker wrote for ``path``; for a worker that was killed (time or memory limit,
    a crash) before writing them, its workload partition's assets as failed with its error."""
    file = _events_file(call_dir, path)
    if file.is_file():
        return read_batch(file)
    if not result.error:
        return []
    first = Partition(WORKLOAD_ASSETS[0].key.path[-1], key)
    return [PartitionEvent(first, WORKLOAD_ASSETS[0].code_versions_by_key.get(WORKLOAD_ASSETS[0].key),
                           error=result.error),
            *(upstream_failed(a, Partition(a.key.path[-1], key), first) for a in WORKLOAD_ASSETS[1:])]


def _materialize_measurements(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """In a worker: ``measured_runtime`` of one workload for each backend ``options["measure"]``
    asks for; a backend that cannot run is a warning (as on the plain path), all failing an error."""
    import logging

    from solar_assets.assets.partitions import backend_key, workload_backend_key
    from solar_assets.measure.backends import resolve_backends
    from solar_assets.workloads import read_workload_source
    from solar_assets.workloads.source import workload_name

    result = WorkloadResult(workload=workload_name(path), path=path)
    home, config, key = Path(options["home"]), SolarConfig(**options["config"]), options["keys"][path]
    measure = options["measure"]
    timing = {"ops": {"measured_runtime": {"config": {"runs": measure.timing.runs,
                                                      "min_runs": measure.timing.min_runs}}}}
    failed = []
    try:
        framework = read_workload_source(path).framework
        backends = resolve_backends(measure.backends, framework)
        with storage_guard(home), solar_instance(home) as instance:
            start = time.perf_counter()
            for backend in backends:
                run = _materialize(instance, config, [measured_runtime], run_config=timing,
                                   partition_key=workload_backend_key(key, backend_key(framework, backend)),
                                   tags={"solar/worker": str(os.getpid())})
                if not run.success:
                    failed.append(failure_message(run, path))
                    logging.getLogger("solar").warning("%s", failed[-1])
            result.seconds["measure"] = time.perf_counter() - start
        if failed and len(failed) == len(backends):
            result.error, result.failed_stage = failed[0], "measure"
    except DagsterStorageError as e:
        result.error, result.failed_stage = str(e), STORAGE_STAGE
    except Exception as e:  # the worker must answer for its file: one line naming it
        result.error = pipeline.with_path(f"measure failed unexpectedly: {type(e).__name__}: {e}", path)
    return result


def _parents(asset: dg.AssetsDefinition, workload: str, hardware: str | None) -> dict[str, Partition]:
    """``input or dependency name -> Partition`` of each of ``asset``'s parents for this workload
    (and hardware): a workload-partitioned parent on the workload key, a hardware one on the
    hardware key, a pair one on the pair."""
    by_key = {a.key: a for a in (*SOURCE_ASSETS, *ASSETS)}
    names = {k: n for n, k in asset.keys_by_input_name.items()}
    out = {}
    for dep in sorted(asset.dependency_keys, key=lambda k: k.to_user_string()):
        parent = by_key[dep].partitions_def
        name = dep.path[-1]
        if parent is workload_partitions:
            out[names.get(dep, name)] = Partition(name, workload)
        elif parent is hardware_partitions:
            out[names.get(dep, name)] = Partition(name, hardware)
        else:
            out[names.get(dep, name)] = Partition.of(name, workload_hardware_key(workload, hardware or ""))
    return out


def _compute_workload(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """In a worker: the workload partition's assets, then its bound assets on each hardware, by
    their own functions (``batch.compute``); values into the IO manager's storage, the events to
    ``<call_dir>/<hash of path>.pickle`` for the CLI's one run. The result carries the first error."""
    from solar_assets.workloads.source import workload_name

    result = WorkloadResult(workload=workload_name(path), path=path)
    home, config, key = options["home"], SolarConfig(**options["config"]), options["keys"][path]
    resources = {"solar": config}
    bound_assets = (cache_aware_bound_asset, *((inverse_roofline_asset,) if options["inverse"] else ()), sol_bounds_asset)
    events: list[PartitionEvent] = []
    values: dict[Partition, Any] = {}
    failed: dict[Partition, Partition] = {}  # partition -> the failed partition that stopped it

    def run(asset: dg.AssetsDefinition, partition: Partition, hardware: str | None) -> None:
        parents = _parents(asset, key, hardware)
        stopped = next((failed[p] for p in parents.values() if p in failed), None)
        if stopped is not None:
            events.append(upstream_failed(asset, partition, stopped))
            failed[partition] = stopped
            return
        inputs = {name: values[p] for name, p in parents.items() if p in values}
        event, value = compute(asset, partition, inputs, resources, list(parents.values()))
        events.append(event)
        if event.error is not None:
            failed[partition] = partition
            if result.error is None:
                result.error = pipeline.with_path(event.error, path)
            return
        store_value(home, partition, value)
        values[partition] = value

    try:
        start = time.perf_counter()
        for asset in WORKLOAD_ASSETS:
            run(asset, Partition(asset.key.path[-1], key), None)
        result.seconds["workload stages"] = time.perf_counter() - start
        if result.error is None:
            start = time.perf_counter()
            for name in options["hardware"]:
                if name in options["hardware_errors"]:
                    result.error = options["hardware_errors"][name]
                    break
                spec = Partition(hardware_spec.key.path[-1], name)
                values[spec] = load_value(home, spec)
                for asset in bound_assets:
                    run(asset, Partition.of(asset.key.path[-1], workload_hardware_key(key, name)), name)
                if result.error is not None:
                    break
            result.seconds["bounds"] = time.perf_counter() - start
    except Exception as e:  # the worker must answer for its file: one line naming it
        log.debug("%s failed", path, exc_info=True)
        result.error = pipeline.with_path(f"the Dagster assets failed unexpectedly: {type(e).__name__}: {e}", path)
    write_batch(_events_file(options["call_dir"], path), events)
    return result


def _fail_abandoned_runs(instance: dg.DagsterInstance, results: Sequence[WorkloadResult]) -> None:
    """Mark as failed the runs a killed worker left STARTED (its file timed out or was killed),
    so the UI does not show them running forever."""
    if not any("unfinished" in r.seconds for r in results):  # pipeline.unfinished_result
        return
    for record in instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED],
                                                         tags={"solar/cli": "analyze"})):
        pid = record.dagster_run.tags.get("solar/worker")
        if pid and not _alive(int(pid)):
            instance.report_run_failed(record.dagster_run, "its solar worker was stopped (time or memory "
                                                           "limit, or a crash)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
