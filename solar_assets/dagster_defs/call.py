"""The Dagster side of one ``solar analyze`` call (``runner.analyze_with_dagster`` drives it).

Kept apart from ``runner`` so the CLI starts its workers before importing Dagster and the assets:
this module is imported by the workers (``compute_workload``) and, in the CLI, by a thread that
prepares the instance while the first worker starts (``prepare_call``).

- ``prepare_call``: partitions registered, the files' observations and the hardware specs
  (computed here: a YAML, no workload code) as events, values stored for the report.
- ``compute_workload`` (in a worker): the workload partition's assets, then its bound assets on
  each hardware, by their own functions (``batch.compute``); values into the IO manager's
  storage, the events to a file of the call's directory.
- ``report_call``: the call's one Dagster run, ``headroom_report`` and its checks, whose step
  records every event first (``batch.record_call``).
"""
from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from ir_schemas import ReportRow
from solar_assets import pipeline
from solar_assets.dagster_defs.batch import (
    Partition,
    PartitionEvent,
    compute,
    latest_versions,
    read_batch,
    store_value,
    upstream_failed,
    write_batch,
)
from solar_assets.dagster_defs.asset_checks import REPORT_CHECKS
from solar_assets.dagster_defs.partitions import (
    hardware_partitions,
    register_partitions,
    workload_hardware_key,
    workload_partitions,
)
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.runner import (
    QUIET_LOGGERS,
    STORAGE_STAGE,
    DagsterStorageError,
    failure_message,
    solar_instance,
    storage_guard,
)
from solar_assets.dagster_defs.sources import SOURCE_ASSETS, hardware_file, workload_file
from solar_assets.dagster_defs.assets import ASSETS, WORKLOAD_ASSETS, hardware_spec, headroom_report, measured_runtime
from solar_assets.dagster_defs.assets import cache_aware_bound as cache_aware_bound_asset
from solar_assets.dagster_defs.assets import einsum_graph as einsum_graph_asset
from solar_assets.dagster_defs.assets import inverse_roofline as inverse_roofline_asset
from solar_assets.dagster_defs.assets import sol_bounds as sol_bounds_asset
from solar_assets.errors import SolarError
from solar_assets.pipeline import WorkloadResult

log = logging.getLogger(__name__)


def prepare_call(instance: dg.DagsterInstance, config: SolarConfig, keys: Sequence[str],
                 hardware_names: Sequence[str]) -> list[PartitionEvent]:
    """Before the workers' events: the partitions registered, an observation of each file whose
    hash changed, ``hardware_spec`` of each name (value stored). When a file changed, also imports
    the checks' great-expectations here, while the workers compute (~5 s of CPU; a call whose
    table is unchanged reads the checks' memoised verdicts and needs none)."""
    register_partitions(instance, list(keys), list(hardware_names))
    # the files' hashes first: what is recorded after them is then fresh against them in the UI
    events = source_observations(instance, config, list(keys), list(hardware_names))
    changed = bool(events)
    events += hardware_specs(config, hardware_names)[0]
    if changed:  # a new or edited file: the report's table changes, the checks' suites will run
        try:
            import great_expectations  # noqa: F401  (imported here while the worker computes)
        except ImportError:
            pass
    return events


def _resources(config: SolarConfig) -> dict[str, Any]:
    """The resources an asset function may take, as the definitions bind them (``compute``
    passes the ones its signature names)."""
    from solar_assets.dagster_defs.definitions import resources_for

    return resources_for(config)


def report_call(instance: dg.DagsterInstance, config: SolarConfig, record_file: Path,
                failures: Sequence[str]) -> tuple[list[ReportRow], list[dg.AssetCheckEvaluation]]:
    """The call's one run: ``headroom_report`` (recording ``record_file``'s events first) and its checks."""
    report_config = {"failures": list(failures), "record_file": str(record_file)}
    run = materialize(instance, config, [headroom_report],
                      run_config={"ops": {"headroom_report": {"config": report_config}}})
    if not run.success:
        raise SolarError(failure_message(run, Path(config.home) / "reports"))
    return run.output_for_node("headroom_report"), list(run.get_asset_check_evaluations())


def materialize(instance: dg.DagsterInstance, config: SolarConfig, selection: Sequence[Any],
                 partition_key: str | None = None, run_config: dict[str, Any] | None = None,
                 tags: dict[str, str] | None = None) -> dg.ExecuteInProcessResult:
    from solar_assets.dagster_defs.definitions import resources_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.materialize([*SOURCE_ASSETS, *ASSETS, *REPORT_CHECKS], selection=list(selection), partition_key=partition_key,
                              instance=instance, resources=resources_for(config),
                              run_config={**QUIET_LOGGERS, **(run_config or {})}, raise_on_error=False,
                              tags={"solar/cli": "analyze", **(tags or {})})


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
        partition = Partition(hardware_spec.key.path[-1], name)
        event, value = compute(hardware_spec, partition, {}, _resources(config),
                               [Partition(hardware_file.key.path[-1], name)])
        events.append(event)
        if event.error is not None:
            errors[name] = pipeline.with_path(event.error, Path(config.hardware_dir) / f"{name}.yaml")
        else:
            store_value(config.home, partition, value)
    return events, errors


def events_file(call_dir: str, path: str) -> Path:
    import hashlib

    return Path(call_dir) / f"{hashlib.sha256(path.encode()).hexdigest()[:16]}.pickle"


def worker_events(call_dir: str, path: str, key: str, result: WorkloadResult) -> list[PartitionEvent]:
    """The events a worker wrote for ``path``; for a worker that was killed (time or memory limit,
    a crash) before writing them, its workload partition's assets as failed with its error."""
    file = events_file(call_dir, path)
    if file.is_file():
        return read_batch(file)
    if not result.error:
        return []
    first = Partition(WORKLOAD_ASSETS[0].key.path[-1], key)
    return [PartitionEvent(first, WORKLOAD_ASSETS[0].code_versions_by_key.get(WORKLOAD_ASSETS[0].key),
                           error=result.error),
            *(upstream_failed(a, Partition(a.key.path[-1], key), first) for a in WORKLOAD_ASSETS[1:])]


def materialize_measurements(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """In a worker: ``measured_runtime`` of one workload for each backend ``options["measure"]``
    asks for; a backend that cannot run is a warning (as on the plain path), all failing an error."""
    import logging

    from solar_assets.dagster_defs.partitions import backend_key, workload_backend_key
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
                run = materialize(instance, config, [measured_runtime], run_config=timing,
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


def _per_op_rows(workload: str, values: dict[Partition, Any], key: str, hardware: str) -> list[Any]:
    """The pair's per-op rows from the values just computed, for the CLI's ``per_op.csv`` (else
    the CLI lifts every graph again from the cached IR, importing torch: ~2 s of a call); a
    breakdown that cannot be made is left out (the CLI logs it), the bounds stand."""
    from solar_assets.report.per_op import per_op_rows

    graph = values.get(Partition(einsum_graph_asset.key.path[-1], key))
    bounds = values.get(Partition.of(sol_bounds_asset.key.path[-1], workload_hardware_key(key, hardware)))
    if graph is None or bounds is None:
        return []
    try:
        return per_op_rows(workload, graph, bounds.bounds, hardware)
    except Exception:  # a view of the bounds: the CLI lifts it again and logs why it is missing
        log.debug("%s on %s: no per-op breakdown", workload, hardware, exc_info=True)
        return []


def compute_workload(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """In a worker: the workload partition's assets, then its bound assets on each hardware, by
    their own functions (``batch.compute``); values into the IO manager's storage, the events to
    ``<call_dir>/<hash of path>.pickle`` for the CLI's one run. The result carries the first error
    and each pair's per-op rows (as the plain path's worker returns them)."""
    from solar_assets.workloads.source import workload_name

    result = WorkloadResult(workload=workload_name(path), path=path)
    home, config, key = options["home"], SolarConfig(**options["config"]), options["keys"][path]
    resources = _resources(config)
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
                spec = Partition(hardware_spec.key.path[-1], name)
                event, value = compute(hardware_spec, spec, {}, resources, [Partition(hardware_file.key.path[-1], name)])
                if event.error is not None:  # recorded by the CLI, which computes the spec too
                    result.error = pipeline.with_path(event.error, Path(config.hardware_dir) / f"{name}.yaml")
                    break
                values[spec] = value
                for asset in bound_assets:
                    run(asset, Partition.of(asset.key.path[-1], workload_hardware_key(key, name)), name)
                if result.error is not None:
                    break
                result.per_op += _per_op_rows(result.workload, values, key, name)
            result.seconds["bounds"] = time.perf_counter() - start
    except Exception as e:  # the worker must answer for its file: one line naming it
        log.debug("%s failed", path, exc_info=True)
        result.error = pipeline.with_path(f"the Dagster assets failed unexpectedly: {type(e).__name__}: {e}", path)
    write_batch(events_file(options["call_dir"], path), events)
    return result


