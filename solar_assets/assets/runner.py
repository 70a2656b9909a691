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
from solar_assets.assets.partitions import WORKLOAD_PARTITIONS_NAME, workload_hardware_key
from solar_assets.assets.resources import SolarConfig
from solar_assets.assets.stages import ASSETS, BOUND_ASSETS, WORKLOAD_ASSETS, hardware_spec, headroom_report
from solar_assets.assets.stages import inverse_roofline as inverse_roofline_asset
from solar_assets.errors import SolarError
from solar_assets.pipeline import WorkloadResult

DAGSTER_YAML = """\
# solar's embedded Dagster instance: SQLite storage in this directory (written by solar).
telemetry:
  enabled: false
# Keep Dagster's per-file debug lines ("Loading partition ...", "Writing file at ...") out of
# the event log: each stored event costs a SQLite write, and they double a run's events.
python_logs:
  python_log_level: INFO
"""
# Dagster's console logger would repeat every failure with a stack trace: the CLI reports them itself.
QUIET_LOGGERS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def dagster_home(home: Path) -> Path:
    """``$SOLAR_HOME/dagster`` with a ``dagster.yaml`` (telemetry off), created if missing."""
    path = home / "dagster"
    path.mkdir(parents=True, exist_ok=True)
    config = path / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    return path


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
        return dg.materialize(list(ASSETS), selection=list(selection), partition_key=partition_key,
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
        new = [r.workload for r in results if not instance.has_dynamic_partition(WORKLOAD_PARTITIONS_NAME, r.workload)]
        if new:
            instance.add_dynamic_partitions(WORKLOAD_PARTITIONS_NAME, sorted(set(new)))
        base = SolarConfig.default(home_dir, target_latency_s=target_latency_s)
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
