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
from solar_assets.assets.partitions import register_partitions, workload_hardware_key, workload_key
from solar_assets.assets.resources import SolarConfig
from solar_assets.assets.sources import SOURCE_ASSETS, observe_sources
from solar_assets.assets.checks import REPORT_CHECKS
from solar_assets.assets.stages import ASSETS, BOUND_ASSETS, WORKLOAD_ASSETS, hardware_spec, headroom_report, measured_runtime
from solar_assets.assets.stages import inverse_roofline as inverse_roofline_asset
from solar_assets.errors import SolarError
from solar_assets.pipeline import WorkloadResult

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
    """Materialise every asset for ``paths`` × ``hardware_names``; return per-workload results
    (``error`` set where a stage failed) and the ``headroom_report`` rows, in the order asked.
    ``failures``: errors found before any run (bad paths), listed in the report too. Each file's
    materialisations run in a worker process limited to ``timeout_s`` and ``memory_limit_bytes``;
    ``on_stage(workload, stage)`` as each stage starts. Raises ``DagsterStorageError`` when the
    instance's database cannot be used."""
    from solar_assets.workers import run_in_workers

    home_dir = pipeline.solar_home(home)
    base = SolarConfig.default(home_dir, target_latency_s=target_latency_s)
    keys = {str(p): workload_key(p, base.workload_dir) for p in paths}
    config = base.model_copy(update={"workload_files": {k: p for p, k in keys.items()}})
    check_storage(home_dir)
    with storage_guard(home_dir), solar_instance(home_dir) as instance:
        register_partitions(instance, list(keys.values()), list(hardware_names))
        # record the files' hashes first: what runs below is then fresh against them in the UI
        observe_sources(instance, config)
        hardware_errors = {}
        for name in hardware_names:
            run = _materialize(instance, base, [hardware_spec], partition_key=name)
            if not run.success:
                hardware_errors[name] = failure_message(run, f"hardware/{name}.yaml")
    options = {"home": str(home_dir), "config": config.model_dump(), "keys": keys,
               "hardware": list(hardware_names), "hardware_errors": hardware_errors,
               "inverse": target_latency_s is not None}
    results = run_in_workers(list(keys), _materialize_workload, pipeline.unfinished_result, None, jobs=1,
                             timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes, task_arg=options,
                             on_event=(lambda index, workload, stage: on_stage(workload, stage)) if on_stage else None)
    storage = [r for r in results if r.failed_stage == STORAGE_STAGE]
    if storage:
        raise DagsterStorageError(storage[0].error)
    if measure is not None:
        bounded = [r.path for r in results if r.ok]
        measured = run_in_workers(bounded, _materialize_measurements, pipeline.unfinished_result, None, jobs=1,
                                  timeout_s=timeout_s, memory_limit_bytes=memory_limit_bytes,
                                  task_arg={**options, "measure": measure})
        for result, outcome in zip([r for r in results if r.ok], measured):
            if outcome.error:
                result.error = outcome.error
    with storage_guard(home_dir), solar_instance(home_dir) as instance:
        _fail_abandoned_runs(instance, results)
        # every materialised partition: the report is the whole table, this call's rows within it
        report_config = {"failures": [*failures, *(r.error for r in results if r.error)]}
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


def _materialize_workload(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """In a worker: the workload partition's assets, then its bound assets on each hardware; the
    result carries the error that stopped it (``STORAGE_STAGE`` for the Dagster database)."""
    from solar_assets.workloads.source import workload_name

    result = WorkloadResult(workload=workload_name(path), path=path)
    home = Path(options["home"])
    config = SolarConfig(**options["config"])
    key = options["keys"][path]
    bound_assets = BOUND_ASSETS if options["inverse"] else \
        tuple(a for a in BOUND_ASSETS if a is not inverse_roofline_asset)
    tags = {"solar/worker": str(os.getpid())}
    try:
        with storage_guard(home), solar_instance(home) as instance:
            start = time.perf_counter()
            run = _materialize(instance, config, WORKLOAD_ASSETS, partition_key=key, tags=tags)
            result.seconds["workload stages"] = time.perf_counter() - start
            if not run.success:
                result.error = failure_message(run, path)
                return result
            start = time.perf_counter()
            for name in options["hardware"]:
                if name in options["hardware_errors"]:
                    result.error = options["hardware_errors"][name]
                    break
                run = _materialize(instance, config, bound_assets, partition_key=workload_hardware_key(key, name),
                                   tags=tags)
                if not run.success:
                    result.error = failure_message(run, path)
                    break
            result.seconds["bounds"] = time.perf_counter() - start
    except DagsterStorageError as e:
        result.error, result.failed_stage = str(e), STORAGE_STAGE
    except Exception as e:  # the worker must answer for its file: one line naming it
        result.error = pipeline.with_path(f"the Dagster run failed unexpectedly: {type(e).__name__}: {e}", path)
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
