"""Materialise the assets in-process for a list of workload files: what ``solar analyze`` runs.

One ``dg.materialize`` per partition (workload; then workload × hardware), in-process, on the
embedded Dagster instance under ``$SOLAR_HOME/dagster``, then ``headroom_report`` for exactly
the workloads and hardware asked for. A failed step is reported per workload (the message
names the file) and the other workloads carry on.
"""
from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from ir_schemas import ReportRow
from solar_assets import pipeline
from solar_assets.assets.partitions import register_partitions, workload_hardware_key
from solar_assets.assets.resources import SolarConfig
from solar_assets.assets.sources import SOURCE_ASSETS, observe_sources
from solar_assets.assets.stages import ASSETS, BOUND_ASSETS, WORKLOAD_ASSETS, hardware_spec, headroom_report
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
"""
DAGSTER_YAML_MARK = "# solar's embedded Dagster instance"
# Dagster's console logger would repeat every failure with a stack trace: the CLI reports them itself.
QUIET_LOGGERS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def dagster_home(home: Path) -> Path:
    """``$SOLAR_HOME/dagster`` with a ``dagster.yaml`` (telemetry off), created if missing."""
    path = home / "dagster"
    path.mkdir(parents=True, exist_ok=True)
    config = path / "dagster.yaml"
    if not config.exists() or (config.read_text().startswith(DAGSTER_YAML_MARK) and config.read_text() != DAGSTER_YAML):
        config.write_text(DAGSTER_YAML)  # solar's own file is kept current; a user's is left alone
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
                 partition_key: str | None = None, run_config: dict[str, Any] | None = None
                 ) -> dg.ExecuteInProcessResult:
    from solar_assets.definitions import resources_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.materialize([*SOURCE_ASSETS, *ASSETS], selection=list(selection), partition_key=partition_key,
                              instance=instance, resources=resources_for(config),
                              run_config={**QUIET_LOGGERS, **(run_config or {})}, raise_on_error=False,
                              tags={"solar/cli": "analyze"})


def analyze_with_dagster(paths: Sequence[str | Path], hardware_names: Sequence[str],
                         target_latency_s: float | None = None, home: str | Path | None = None,
                         failures: Sequence[str] = ()) -> tuple[list[WorkloadResult], list[ReportRow]]:
    """Materialise every asset for ``paths`` × ``hardware_names``; return per-workload results
    (``error`` set where a stage failed) and the ``headroom_report`` rows, in the order asked.
    ``failures``: errors found before any run (bad paths), listed in the report too."""
    home_dir = pipeline.solar_home(home)
    results = [WorkloadResult(workload=Path(p).stem, path=str(p)) for p in paths]
    with solar_instance(home_dir) as instance:
        register_partitions(instance, [r.workload for r in results], list(hardware_names))
        base = SolarConfig.default(home_dir, target_latency_s=target_latency_s)
        # record the files' hashes first: what runs below is then fresh against them in the UI
        for directory in sorted({str(Path(r.path).parent) for r in results}) or [base.workload_dir]:
            observe_sources(instance, SolarConfig.default(home_dir, workload_dir=directory))
        hardware_errors = {}
        for name in hardware_names:
            run = _materialize(instance, base, [hardware_spec], partition_key=name)
            if not run.success:
                hardware_errors[name] = failure_message(run, f"hardware/{name}.yaml")
        bound_assets = BOUND_ASSETS if target_latency_s is not None else \
            tuple(a for a in BOUND_ASSETS if a is not inverse_roofline_asset)
        for result in results:
            start = time.perf_counter()
            config = SolarConfig.default(home_dir, workload_dir=Path(result.path).parent,
                                         target_latency_s=target_latency_s)
            run = _materialize(instance, config, WORKLOAD_ASSETS, partition_key=result.workload)
            result.seconds["workload stages"] = time.perf_counter() - start
            if not run.success:
                result.error = failure_message(run, result.path)
                continue
            start = time.perf_counter()
            for name in hardware_names:
                if name in hardware_errors:
                    result.error = hardware_errors[name]
                    break
                run = _materialize(instance, config, bound_assets,
                                   partition_key=workload_hardware_key(result.workload, name))
                if not run.success:
                    result.error = failure_message(run, result.path)
                    break
            result.seconds["bounds"] = time.perf_counter() - start
        report_config = {"workloads": [r.workload for r in results if r.ok], "hardware": list(hardware_names),
                         "failures": [*failures, *(r.error for r in results if r.error)]}
        run = _materialize(instance, base, [headroom_report],
                           run_config={"ops": {"headroom_report": {"config": report_config}}})
        if not run.success:
            raise SolarError(failure_message(run, home_dir / "reports"))
        rows: list[ReportRow] = run.output_for_node("headroom_report")
    for result in results:
        result.rows = [r for r in rows if r.workload == result.workload]
    return results, rows
