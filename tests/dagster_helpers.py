"""One way the Dagster tests materialise assets in-process: every asset and source, the run's
resources from ``definitions.resources_for``, quiet loggers, failures returned rather than raised."""
from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import dagster as dg

from solar_assets.dagster_defs.assets import ASSETS
from solar_assets.dagster_defs.runner import QUIET_LOGGERS
from solar_assets.dagster_defs.sources import SOURCE_ASSETS


def materialize(instance, config, selection, partition_key=None, run_config=None):
    from solar_assets.dagster_defs.definitions import resources_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.materialize([*SOURCE_ASSETS, *ASSETS], selection=list(selection), partition_key=partition_key,
                              instance=instance, resources=resources_for(config),
                              run_config={**QUIET_LOGGERS, **(run_config or {})}, raise_on_error=False)


def call_tree(root: Path, hardware: list[str]) -> tuple[Path, Path, Path]:
    """``(hardware dir, workload dir, home)`` under ``root``, the hardware dir holding copies of
    the shipped specs named (a test may edit them)."""
    repo = Path(__file__).resolve().parents[1]
    hardware_dir, workloads, home = root / "hardware", root / "workloads", root / "home"
    hardware_dir.mkdir()
    workloads.mkdir()
    for name in hardware:
        shutil.copy(repo / "hardware" / f"{name}.yaml", hardware_dir / f"{name}.yaml")
    return hardware_dir, workloads, home


def last_call_runs(instance: dg.DagsterInstance) -> list[dg.DagsterRun]:
    """The runs of the latest ``solar analyze`` call (its ``solar_analyze`` run and the report's),
    found by the call id both carry; newest first."""
    from solar_assets.dagster_defs.call import CALL_TAG

    latest = instance.get_runs(filters=dg.RunsFilter(job_name="solar_analyze"), limit=1)
    if not latest:
        return []
    return list(instance.get_runs(filters=dg.RunsFilter(tags={CALL_TAG: latest[0].tags[CALL_TAG]})))


def call_materialisations(instance: dg.DagsterInstance) -> dict[str, set[str | None]]:
    """``asset -> partitions`` materialised by the latest call's runs."""
    out: dict[str, set[str | None]] = {}
    for run in last_call_runs(instance):
        for r in instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records:
            event = r.event_log_entry.dagster_event
            out.setdefault(event.asset_key.to_user_string(), set()).add(event.partition)
    return out


def dagster_stale(instance, defs) -> dict:
    """What Dagster's own resolver (the UI's "Unsynced") reports STALE: the independent reference
    for ``staleness.stale_partitions``. Dagster's internals, in a test only: solar itself reads
    the public records."""
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
    from dagster._time import get_current_datetime

    graph = defs.resolve_asset_graph()
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)
    stale = {}
    for key in graph.toposorted_asset_keys:
        node = graph.get(key)
        if not node.is_materializable:
            continue
        partitions = [None] if node.partitions_def is None else \
            node.partitions_def.get_partition_keys(dynamic_partitions_store=instance)
        found = [p for p in partitions if resolver.get_status(key, p) == StaleStatus.STALE]
        if found:
            stale[key] = found
    return stale
