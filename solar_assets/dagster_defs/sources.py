"""The files everything starts from, as observable source assets: ``workload_file`` (one partition
per ``<workload_dir>/<stem>.py``) and ``hardware_file`` (one per ``<hardware_dir>/<stem>.yaml``).

An observation records each file's content hash as the partition's data version, so Dagster knows
a file changed before anything is recomputed: ``workload_source`` / ``hardware_spec`` depend on
them, turn stale for exactly the edited partition, and the re-analysis conditions
(``solar_assets.dagster_defs.automation``) take it from there. The observation jobs are what the
``source_files`` sensor launches when a hash differs from the last observed one.
"""
from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping
from pathlib import Path

import dagster as dg

from solar_assets.dagster_defs.partitions import (
    HARDWARE_PARTITIONS_NAME,
    WORKLOAD_PARTITIONS_NAME,
    hardware_partitions,
    workload_partitions,
)
from solar_assets.dagster_defs.resources import SolarConfig



def file_version(path: str | Path) -> str:
    """The data version of a file: the first 16 hex digits of the sha256 of its bytes (the same
    digits ``workload_source`` uses, so the two agree on an unchanged file)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def workload_file_versions(solar: SolarConfig, keys: list[str]) -> dict[str, str]:
    """``key -> file_version`` for the registered workload keys whose file exists."""
    return {k: file_version(solar.workload_path(k)) for k in keys if solar.workload_path(k).is_file()}


def hardware_files(solar: SolarConfig) -> dict[str, Path]:
    """Every spec a hardware partition may name, by stem: those in ``solar.hardware_dir`` and, when
    that is a directory of the CLI's search path (the default: ``$SOLAR_HARDWARE_DIR``,
    ``$SOLAR_HOME/hardware``, the shipped specs), every directory on it, the first match winning as
    in ``load_hardware`` (so ``host.yaml`` from ``solar hardware detect`` is found)."""
    from solar_assets.hardware import hardware_dirs

    own, search = Path(solar.hardware_dir), hardware_dirs()
    on_path = own.resolve() in {d.resolve() for d in search}
    found: dict[str, Path] = {}
    for root in (dict.fromkeys([own, *search]) if on_path else [own]):
        for path in sorted(root.glob("*.yaml")) if root.is_dir() else ():
            if path.is_file():
                found.setdefault(path.stem, path)
    return found


def hardware_file_versions(solar: SolarConfig, keys: list[str]) -> dict[str, str]:
    """``key -> file_version`` for the registered hardware keys whose YAML exists."""
    files = hardware_files(solar)
    return {k: file_version(files[k]) for k in keys if k in files}


def _versions_by_partition(versions: dict[str, str]) -> dg.DataVersionsByPartition:
    with warnings.catch_warnings():  # beta in dagster 1.13 (pinned): not the user's concern
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.DataVersionsByPartition(versions)


with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.BetaWarning)

    @dg.observable_source_asset(partitions_def=workload_partitions, required_resource_keys={"solar"},
                                group_name="sources", description="A workload file; data version = its sha256.")
    def workload_file(context) -> dg.DataVersionsByPartition:
        keys = context.instance.get_dynamic_partitions(WORKLOAD_PARTITIONS_NAME)
        return _versions_by_partition(workload_file_versions(context.resources.solar, keys))

    @dg.observable_source_asset(partitions_def=hardware_partitions, required_resource_keys={"solar"},
                                group_name="sources", description="A hardware YAML; data version = its sha256.")
    def hardware_file(context) -> dg.DataVersionsByPartition:
        keys = context.instance.get_dynamic_partitions(HARDWARE_PARTITIONS_NAME)
        return _versions_by_partition(hardware_file_versions(context.resources.solar, keys))


SOURCE_ASSETS = (workload_file, hardware_file)

# One job per source: a job's assets must share a partitions definition. A run observes every
# registered partition of its source at once (the observation returns a version per partition).
observe_workload_files = dg.define_asset_job(
    "observe_workload_files", selection=dg.AssetSelection.assets(workload_file.key),
    description="Hash every registered workload file; the hashes become its partitions' data versions.",
)
observe_hardware_files = dg.define_asset_job(
    "observe_hardware_files", selection=dg.AssetSelection.assets(hardware_file.key),
    description="Hash every registered hardware YAML; the hashes become its partitions' data versions.",
)
OBSERVE_JOBS = {workload_file.key.to_user_string(): observe_workload_files,
                hardware_file.key.to_user_string(): observe_hardware_files}


DATA_VERSION_TAG = "dagster/data_version"
"""The tag under which Dagster records an event's data version (its documented name)."""


def entry_data_version(entry: dg.EventLogEntry) -> str | None:
    """The data version a materialisation or observation event carries (None: none)."""
    return (entry.tags or {}).get(DATA_VERSION_TAG)


def observed_versions(instance: dg.DagsterInstance, key: dg.AssetKey, partitions: list[str]) -> Mapping[str, str | None]:
    """The last observed data version of each partition of a source asset (None: never observed)."""
    out: dict[str, str | None] = {}
    for partition in partitions:
        record = instance.get_latest_data_version_record(key, is_source=True, partition_key=partition)
        out[partition] = entry_data_version(record.event_log_entry) if record else None
    return out


def changed_files(instance: dg.DagsterInstance, solar: SolarConfig) -> list[tuple[str, str, str]]:
    """``(source asset, partition, new version)`` where a file's hash differs from its last observation."""
    changed = []
    for asset, name, versions in (
        (workload_file, WORKLOAD_PARTITIONS_NAME, workload_file_versions),
        (hardware_file, HARDWARE_PARTITIONS_NAME, hardware_file_versions),
    ):
        keys = instance.get_dynamic_partitions(name)
        current = versions(solar, keys)
        seen = observed_versions(instance, asset.key, list(current))
        changed += [(asset.key.to_user_string(), k, v) for k, v in current.items() if seen[k] != v]
    return sorted(changed)


def observe_sources(instance: dg.DagsterInstance, solar: SolarConfig) -> list[dg.ExecuteInProcessResult]:
    """Run the observation jobs in-process (what the sensor launches; ``solar analyze`` calls it
    before materialising, so its results are not marked stale by the first observation)."""
    defs = dg.Definitions(assets=list(SOURCE_ASSETS), jobs=list(OBSERVE_JOBS.values()), resources={"solar": solar})
    quiet = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
    return [defs.resolve_job_def(job.name).execute_in_process(instance=instance, raise_on_error=False, run_config=quiet)
            for job in OBSERVE_JOBS.values()]
