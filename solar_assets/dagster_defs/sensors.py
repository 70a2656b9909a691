"""Discovery and change detection on the files: one sensor over the workload and hardware dirs.

Each tick (every 30 s) it registers new ``*.py`` / ``*.yaml`` stems as partitions and, when a
registered file's hash differs from its last observed data version, launches that source's observation job;
the re-analysis conditions then re-run what the new versions made stale. Hashing a few files is
cheap, so the sensor runs by default; a deleted file keeps its partition (and its history) until
removed in the UI.
"""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

import hashlib

import dagster as dg

from solar_assets.dagster_defs.partitions import (
    HARDWARE_PARTITIONS_NAME,
    WORKLOAD_PARTITIONS_NAME,
    hardware_partitions,
    workload_key,
    workload_partitions,
)
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.sources import OBSERVE_JOBS, changed_files, hardware_files
from solar_assets.workloads import discover_workloads


def new_partitions(instance: dg.DagsterInstance, solar: SolarConfig) -> tuple[list[str], list[str]]:
    """Workload keys (``workload_key``) and hardware stems present in the dirs but not yet registered."""
    known_w = set(instance.get_dynamic_partitions(WORKLOAD_PARTITIONS_NAME))
    known_h = set(instance.get_dynamic_partitions(HARDWARE_PARTITIONS_NAME))
    workloads = sorted({workload_key(p, solar.workload_dir) for p in discover_workloads(solar.workload_dir)} - known_w)
    hardware = sorted(set(hardware_files(solar)) - known_h)  # every dir of the CLI's search path
    return workloads, hardware


@dg.sensor(minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
           jobs=list(OBSERVE_JOBS.values()))
def source_files(context: dg.SensorEvaluationContext, solar: SolarConfig) -> dg.SensorResult | dg.SkipReason:
    """Register new workload / hardware files as partitions; observe the files when one changed."""
    workloads, hardware = new_partitions(context.instance, solar)
    requests = []
    if workloads:
        requests.append(workload_partitions.build_add_request(workloads))
    if hardware:
        requests.append(hardware_partitions.build_add_request(hardware))
    # partitions added by this result are observed on the next tick, once they exist
    changed = changed_files(context.instance, solar)
    runs = []
    for source, job in OBSERVE_JOBS.items():
        mine = [c for c in changed if c[0] == source]
        if mine:
            run_key = hashlib.sha256(repr(mine).encode()).hexdigest()[:16]
            runs.append(dg.RunRequest(job_name=job.name, run_key=f"observe-{run_key}",
                                      tags={"solar/changed": _summary(mine)}))
    if not requests and not runs:
        return dg.SkipReason(f"no new or changed files in {solar.workload_dir} or {solar.hardware_dir}")
    return dg.SensorResult(run_requests=runs, dynamic_partitions_requests=requests)


def _summary(changed: list[tuple[str, str, str]]) -> str:
    text = ", ".join(f"{asset}[{partition}]" for asset, partition, _ in changed)
    return text if len(text) <= 200 else text[:197] + "..."


# The old name of this sensor, kept for anything that imported it.
workload_files = source_files
