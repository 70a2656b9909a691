"""Discovery and change detection on the files: one sensor over the workload and hardware dirs.

Each tick (every 30 s) it registers new ``*.py`` / ``*.yaml`` stems as partitions and, when a
registered file's hash differs from its last observed data version, launches that source's observation job;
the re-analysis conditions then re-run what the new versions made stale. Hashing a few files is
cheap, so the sensor runs by default; a deleted file keeps its partition (and its history) until
removed in the UI.

What solar ships — the checkout's ``data/workloads`` examples and its hardware specs — are not the
user's: a fresh home shows only what the user registered (``solar analyze`` registers what it is
given), not 22 workloads × 8 parts "Missing". The sensor's cursor keeps the shipped files it found
at its first tick; a shipped-dir file added after that (the user's own, dropped beside the
examples) is registered like any file of a directory the user configured.
"""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

import hashlib
import json
from pathlib import Path

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


def _shipped_dirs() -> set[Path]:
    from solar_assets.hardware.spec import shipped_hardware_dir
    from solar_assets.paths import REPO_ROOT

    return {d.resolve() for d in (REPO_ROOT / "data" / "workloads", shipped_hardware_dir(),
                                  Path(__file__).resolve().parents[1] / "_shipped" / "workloads")}


def files_on_disk(solar: SolarConfig) -> tuple[dict[str, bool], dict[str, bool]]:
    """(workload key -> shipped, hardware stem -> shipped): every file the dirs hold, and whether
    it is one solar ships (an example of the checkout's ``data/workloads``, a shipped spec)."""
    shipped = _shipped_dirs()
    workloads = {workload_key(p, solar.workload_dir): Path(p).resolve().parent in shipped
                 for p in discover_workloads(solar.workload_dir)}
    hardware = {stem: path.resolve().parent in shipped for stem, path in hardware_files(solar).items()}
    return workloads, hardware


def new_partitions(instance: dg.DagsterInstance, solar: SolarConfig,
                   baseline: frozenset[str] | None = None) -> tuple[list[str], list[str]]:
    """Workload keys (``workload_key``) and hardware stems present in the dirs but not yet
    registered: every file of a directory the user configured, and a shipped file only when it is
    not in ``baseline`` (``w:<key>`` / ``h:<stem>``: the shipped files of the sensor's first tick;
    None: every shipped file is in it)."""
    known_w = set(instance.get_dynamic_partitions(WORKLOAD_PARTITIONS_NAME))
    known_h = set(instance.get_dynamic_partitions(HARDWARE_PARTITIONS_NAME))
    on_disk_w, on_disk_h = files_on_disk(solar)

    def wanted(prefix: str, key: str, shipped: bool) -> bool:
        return not shipped or (baseline is not None and f"{prefix}:{key}" not in baseline)

    workloads = sorted(k for k, shipped in on_disk_w.items() if k not in known_w and wanted("w", k, shipped))
    hardware = sorted(k for k, shipped in on_disk_h.items() if k not in known_h and wanted("h", k, shipped))
    return workloads, hardware


def shipped_now(solar: SolarConfig) -> frozenset[str]:
    """The shipped files the dirs hold now, as ``new_partitions``'s baseline names them."""
    on_disk_w, on_disk_h = files_on_disk(solar)
    return frozenset([*(f"w:{k}" for k, s in on_disk_w.items() if s), *(f"h:{k}" for k, s in on_disk_h.items() if s)])


@dg.sensor(minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
           jobs=list(OBSERVE_JOBS.values()))
def source_files(context: dg.SensorEvaluationContext, solar: SolarConfig) -> dg.SensorResult | dg.SkipReason:
    """Register new workload / hardware files as partitions; observe the files when one changed."""
    first = context.cursor is None
    baseline = shipped_now(solar) if first else frozenset(json.loads(context.cursor))
    workloads, hardware = new_partitions(context.instance, solar, baseline)
    cursor = json.dumps(sorted(baseline | {f"w:{k}" for k in workloads} | {f"h:{k}" for k in hardware}))
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
        if first or cursor != context.cursor:
            context.update_cursor(cursor)
        return dg.SkipReason(f"no new or changed files in {solar.workload_dir} or {solar.hardware_dir}")
    return dg.SensorResult(run_requests=runs, dynamic_partitions_requests=requests, cursor=cursor)


def _summary(changed: list[tuple[str, str, str]]) -> str:
    text = ", ".join(f"{asset}[{partition}]" for asset, partition, _ in changed)
    return text if len(text) <= 200 else text[:197] + "..."


# The old name of this sensor, kept for anything that imported it.
workload_files = source_files
