"""The Dagster side of one ``solar analyze`` call (``runner.analyze_with_dagster`` drives it).

Kept apart from ``runner`` so the CLI starts its workers before importing Dagster and the assets:
this module is imported by a thread of the CLI that prepares the instance while the first worker
starts (``prepare_call``), and by the workers of ``--measure`` (``materialize_measurements``).

- ``prepare_call``: partitions registered, the files' observations and the hardware specs
  (computed here: a YAML, no workload code) as events, values stored for the report.
- ``worker_events``: what a worker (``asset_compute.worker.compute_workload``, no Dagster there)
  wrote for a file, or its assets as failed when it was killed.
- ``run_analysis``: the call's run, ``solar_analyze``: its one step, ``analyse_workloads``, runs the
  workers and logs every asset partition they computed (``step_events``).
- ``report_call``: the report's run, ``headroom_report`` and its checks, over every materialised
  partition.
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import dagster as dg

from ir_schemas import ReportRow
from solar_assets import pipeline
from solar_assets.asset_compute.graph import HARDWARE_NODE
from solar_assets.asset_compute.keys import Partition, PartitionEvent
from solar_assets.asset_compute.storage import load_value, read_events, store_value, write_events
from solar_assets.asset_compute.worker import compute, events_file, killed_events
from solar_assets.dagster_defs.asset_checks import REPORT_CHECKS
from solar_assets.dagster_defs.step_events import StepEvents, latest_versions
from solar_assets.dagster_defs.partitions import register_partitions
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.instance import (
    QUIET_LOGGERS,
    STORAGE_STAGE,
    DagsterStorageError,
    ReportRunFailed,
    failure_message,
    home_lock,
    process_tags,
    raise_if_interrupted,
    solar_instance,
    storage_guard,
)
from solar_assets.dagster_defs.sources import SOURCE_ASSETS, hardware_file, workload_file
from solar_assets.dagster_defs.assets import (
    ASSETS,
    cache_aware_bound,
    headroom_report,
    inverse_roofline,
    measured_per_op,
    measured_runtime,
    sol_bounds,
)
from solar_assets.pipeline import WorkloadResult

__all__ = ["events_file", "write_events"]  # used by the runner through this module

log = logging.getLogger(__name__)


def prepare_call(instance: dg.DagsterInstance, config: SolarConfig, keys: Sequence[str],
                 hardware_names: Sequence[str]) -> list[PartitionEvent]:
    """Before the workers' events: the partitions registered, an observation of each file whose
    hash changed, ``hardware_spec`` of each name (value stored). When a file changed, also starts
    importing the checks' great-expectations in a thread, while the step computes (~4 s; a call
    whose table is unchanged reads the checks' memoised verdicts and needs none)."""
    register_partitions(instance, list(keys), list(hardware_names))
    # the files' hashes first: what is recorded after them is then fresh against them in the UI
    events = source_observations(instance, config, list(keys), list(hardware_names))
    changed = bool(events)
    events += changed_specs(instance, hardware_specs(config, hardware_names)[0], {e.partition for e in events})
    if changed:  # a new or edited file: the report's table changes, the checks' suites will run
        threading.Thread(target=_warm_up_checks, name="solar-checks-warm-up", daemon=True).start()
    return events


def changed_specs(instance: dg.DagsterInstance, events: Sequence[PartitionEvent],
                  observed: set[Partition]) -> list[PartitionEvent]:
    """The ``hardware_spec`` events to log: a failed one (its error goes to the step's log), and
    one whose data or code version differs from its latest materialisation's or whose file was
    observed again in this call (``observed``); the rest would record the same spec once more, and
    a warm call with nothing else to record then needs no run at all."""
    from solar_assets.dagster_defs.step_events import CODE_VERSION_TAG, DATA_VERSION_TAG, latest_records

    latest = latest_records(instance, dg.AssetKey(HARDWARE_NODE.name),
                            {e.partition.key for e in events if e.error is None})
    out = []
    for event in events:
        record = latest.get(event.partition.key) if event.error is None else None
        tags = (record.event_log_entry.tags or {}) if record is not None else {}
        if record is None or tags.get(DATA_VERSION_TAG) != event.data_version \
                or tags.get(CODE_VERSION_TAG) != event.code_version or observed & set(event.parents):
            out.append(event)
    return out


def _warm_up_checks() -> None:
    """great-expectations imported, its context made and each suite run once (~4 s), in a thread
    while the call's step runs; the report run's checks then find it ready."""
    try:
        from solar_assets.expectations import warm_up

        warm_up()
    except Exception:  # the checks import it again themselves and report what fails there
        log.debug("warming up the checks failed", exc_info=True)


class CallDriver(Protocol):
    """What the call's step runs: the workers over the call's files, each file's partition events
    logged through ``events`` as the file is done."""

    def run(self, context: dg.OpExecutionContext, events: StepEvents) -> None: ...


@dg.op(name="analyse_workloads", required_resource_keys={"call"},
       description="Runs the workers over the call's workload files (time and memory limits, restored state, "
                   "captured output) and materialises each file's asset partitions.")
def analyse_workloads(context) -> None:  # noqa: ANN001 - Dagster reads the hint at runtime (this module defers annotations)
    events = StepEvents(context)
    context.resources.call.run(context, events)
    context.log.info(f"{events.logged} asset partitions materialised or observed")


CALL_TAG = "solar/call"
"""Both runs of one ``solar analyze`` call carry the call's id under this tag."""


def run_analysis(instance: dg.DagsterInstance, driver: CallDriver, home: str | Path, call_id: str) -> str:
    """The call's run (job ``solar_analyze``, in-process executor): ``driver.run`` in its one step.
    Returns the run id; raises ``ReportRunFailed`` when the step failed (a bug, not a workload's
    error: those are the workloads' results)."""
    job = dg.GraphDefinition(name="solar_analyze", node_defs=[analyse_workloads]).to_job(
        resource_defs={"call": dg.ResourceDefinition.hardcoded_resource(driver)})
    run = job.execute_in_process(instance=instance, run_config=QUIET_LOGGERS, raise_on_error=False,
                                 tags={**process_tags(), CALL_TAG: call_id})
    if not run.success:
        raise_if_interrupted(run)
        raise ReportRunFailed(failure_message(run, Path(home) / "reports"))
    return run.run_id


def run_distributed(instance: dg.DagsterInstance, driver: Any, home: str | Path, call_id: str, scale_out: Any,
                    call_dir: Path) -> dict[str, list[str]]:
    """The call's run on Dagster's Dask executor (``scale_out.call_job``): a step that records the
    files' observations and the specs, then one step per file to compute, each on whichever Dask
    worker is free; every step logs its own partitions. The driver (``runner._CallDriver``) goes
    to the steps as a pickle in ``call_dir`` and takes back each file's outcome, as Dagster
    stored it. Returns ``{worker: [file, ...]}``; raises ``ReportRunFailed`` when a step failed."""
    import pickle

    files = driver.step_files()
    if not files:  # every file answered by its record: nothing for a cluster to do
        run_analysis(instance, driver, home, call_id)
        return {}
    plan = call_dir / "driver.pkl"
    plan.write_bytes(pickle.dumps(driver))
    job = dg.build_reconstructable_job("solar_assets.dagster_defs.scale_out", "call_job",
                                       reconstructable_kwargs={"plan": str(plan), "files": len(files)})
    used: dict[str, list[str]] = {}
    with dask_scheduler(scale_out) as address, warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        run_config = {**QUIET_LOGGERS, "execution": {"config": {"cluster": {"existing": {"address": address}}}}}
        with dg.execute_job(job, instance=instance, run_config=run_config, raise_on_error=False,
                            tags={**process_tags(), CALL_TAG: call_id}) as run:
            if not run.success:
                raise ReportRunFailed(failure_message(run, Path(home) / "reports"))
            for index, path in enumerate(files):
                outcome = run.output_for_node(file_step(index))
                driver.absorb(outcome)
                used.setdefault(outcome.worker, []).append(path)
    driver.note_unchanged()
    return used


def file_step(index: int) -> str:
    """The name of the step of the call's ``index``-th file (``--executor dask``)."""
    return f"analyse_file_{index}"


@contextlib.contextmanager
def dask_scheduler(scale_out: Any) -> Iterator[str]:
    """The address of the scheduler ``scale_out`` names, or of a local cluster of its number of
    worker processes, started for the call (on 127.0.0.1) and closed after it. The local workers
    are not daemonic: a file's step starts the limited worker process."""
    import dask
    from distributed import LocalCluster

    from solar_assets.logconf import apply_levels, solar_level

    apply_levels(solar_level())  # distributed sets its loggers to INFO as it is imported
    # Dagster's step arguments (run, plan state) have no size Dask can read: a warning per step
    logging.getLogger("distributed.sizeof").setLevel(logging.ERROR)
    if scale_out.scheduler:
        yield scale_out.scheduler
        return
    with dask.config.set({"distributed.worker.daemon": False}):
        cluster = LocalCluster(n_workers=max(1, scale_out.workers), threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def report_call(instance: dg.DagsterInstance, config: SolarConfig, failures: Sequence[str],
                call_id: str) -> tuple[list[ReportRow], list[dg.AssetCheckEvaluation], int | None]:
    """The report's run: ``headroom_report`` over every materialised partition, and its checks;
    with the storage id of the report's materialisation (None if another run's came after it)."""
    report_config = {"failures": list(failures)}
    run = materialize(instance, config, [headroom_report],
                      run_config={"ops": {"headroom_report": {"config": report_config}}}, tags={CALL_TAG: call_id})
    if not run.success:
        raise_if_interrupted(run)
        raise ReportRunFailed(failure_message(run, Path(config.home) / "reports"))
    latest = _latest_report(instance)
    storage_id = latest.storage_id if latest is not None and latest.run_id == run.run_id else None
    return run.output_for_node("headroom_report"), list(run.get_asset_check_evaluations()), storage_id


REPORT_INPUTS = (sol_bounds, inverse_roofline, cache_aware_bound, measured_runtime)
"""What ``headroom_report`` reads: a materialisation of any of them after the report's makes it stale."""


def report_is_current(instance: dg.DagsterInstance, storage_id: int) -> bool:
    """The report materialised at ``storage_id`` is the latest one, and no input of it was
    materialised since (one query per asset, at most one event read back each): a call that
    recorded nothing would make the same report again."""
    latest = _latest_report(instance)
    if latest is None or latest.storage_id != storage_id:
        return False
    return not any(instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=a.key, after_storage_id=storage_id),
                                                   limit=1).records for a in REPORT_INPUTS)


def _latest_report(instance: dg.DagsterInstance) -> dg.EventLogRecord | None:
    """``headroom_report``'s latest materialisation."""
    records = instance.fetch_materializations(headroom_report.key, limit=1).records
    return records[0] if records else None


def stored_report_rows(home: str | Path) -> list[ReportRow]:
    """``headroom_report``'s stored value: every row of its latest run."""
    return list(load_value(home, Partition(headroom_report.key.path[-1], None)))


def materialize(instance: dg.DagsterInstance, config: SolarConfig, selection: Sequence[Any],
                 partition_key: str | None = None, run_config: dict[str, Any] | None = None,
                 tags: dict[str, str] | None = None) -> dg.ExecuteInProcessResult:
    from solar_assets.dagster_defs.instance import resources_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.materialize([*SOURCE_ASSETS, *ASSETS, *REPORT_CHECKS], selection=list(selection), partition_key=partition_key,
                              instance=instance, resources=resources_for(config),
                              run_config={**QUIET_LOGGERS, **(run_config or {})}, raise_on_error=False,
                              tags={**process_tags(), **(tags or {})})


def source_observations(instance: dg.DagsterInstance, config: SolarConfig, workloads: Sequence[str],
                        hardware: Sequence[str]) -> list[PartitionEvent]:
    """An observation of each given workload / hardware file whose hash differs from its last one
    (what the ``source_files`` sensor would observe), to be recorded before what depends on it."""
    from solar_assets.dagster_defs.sources import hardware_file_versions, workload_file_versions

    events = []
    for asset, versions in ((workload_file, workload_file_versions(config, list(workloads))),
                            (hardware_file, hardware_file_versions(config, list(hardware)))):
        seen = latest_versions(instance, asset.key, list(versions), observation=True)
        events += [PartitionEvent(Partition(asset.key.path[-1], k), None, data_version=v, observation=True)
                   for k, v in versions.items() if seen.get(k, (None,))[0] != v]
    return events


def hardware_specs(config: SolarConfig, names: Sequence[str]) -> tuple[list[PartitionEvent], dict[str, str]]:
    """``hardware_spec`` of each name, computed here (no workload code: a YAML), its value stored
    for the workers and the report; ``(events, {name: error})``."""
    events, errors = [], {}
    for name in names:
        partition = Partition(HARDWARE_NODE.name, name)
        event, value = compute(HARDWARE_NODE, partition, {}, config.settings, [Partition(hardware_file.key.path[-1], name)])
        events.append(event)
        if event.error is not None:
            errors[name] = pipeline.with_path(event.error, Path(config.hardware_dir) / f"{name}.yaml")
        else:
            store_value(config.home, partition, value)
    return events, errors


def worker_events(call_dir: str, path: str, key: str, result: WorkloadResult) -> list[PartitionEvent]:
    """The events a worker wrote for ``path``; for a worker that was killed (time or memory limit,
    a crash) before writing them, its workload partition's assets as failed with its error."""
    file = events_file(call_dir, path)
    if file.is_file():
        return read_events(file)
    return killed_events(key, result.error) if result.error else []


def materialize_measurements(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """In a worker: ``measured_runtime`` of one workload for each backend ``options["measure"]``
    asks for; a backend that cannot run is a warning (as on the plain path), all failing an error."""
    import logging

    from solar_assets.dagster_defs.partitions import backend_key, workload_backend_key
    from solar_assets.measure.backends import resolve_backends
    from solar_assets.workloads import read_workload_source
    from solar_assets.workloads.source import workload_name

    result = WorkloadResult(workload=workload_name(path), path=path)
    home, config, key = Path(options["home"]), SolarConfig(**options["settings"]), options["keys"][path]
    measure = options["measure"]
    timing = {"ops": {"measured_runtime": {"config": {"runs": measure.timing.runs,
                                                      "min_runs": measure.timing.min_runs}}}}
    failed = []
    try:
        framework = read_workload_source(path).framework
        backends = resolve_backends(measure.backends, framework)
        with storage_guard(home), solar_instance(home) as instance, home_lock(home):
            start = time.perf_counter()
            for backend in backends:
                run = materialize(instance, config, [measured_runtime], run_config=timing,
                                   partition_key=workload_backend_key(key, backend_key(framework, backend)),
                                   tags={"solar/worker": str(os.getpid())})
                if not run.success:
                    failed.append(failure_message(run, path))
                    logging.getLogger("solar").warning("%s", failed[-1])
            if measure.per_op:  # the eager run profiled per op and joined with the per-op SOL on the host
                run = materialize(instance, config, [measured_per_op],
                                  partition_key=workload_backend_key(key, backend_key(framework, "eager")),
                                  tags={"solar/worker": str(os.getpid())})
                if run.success:
                    result.op_joins.append(run.output_for_node("measured_per_op"))
                else:
                    logging.getLogger("solar").warning("%s", failure_message(run, path))
            result.seconds["measure"] = time.perf_counter() - start
        if failed and len(failed) == len(backends):
            result.error, result.failed_stage = failed[0], "measure"
    except DagsterStorageError as e:
        result.error, result.failed_stage = str(e), STORAGE_STAGE
    except Exception as e:  # the worker must answer for its file: one line naming it
        result.error = pipeline.with_path(f"measure failed unexpectedly: {type(e).__name__}: {e}", path)
    return result
