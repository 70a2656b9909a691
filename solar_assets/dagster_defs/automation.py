"""Re-analysis: what runs by itself when a file, a spec or the code changes.

One condition on every derived asset (``REANALYSE``): the partition exists already, and since it
was last requested or materialised its code version changed or one of its dependencies got a new
*data version* (not merely a new run: ``AutomationCondition.eager()`` would re-run downstream of
every upstream run). It waits while a dependency is missing or running, or while a dependency (or
one of its dependencies) is about to be requested or is itself pending re-analysis, so each
partition runs once, after its inputs settled. Because data versions are
content hashes, a change travels exactly as far as it changes data: editing one hardware YAML
re-runs ``hardware_spec`` of that hardware, then the bounds of that hardware only; a comment-only
edit stops at ``hardware_spec`` (same figures, same data version).

Partitions never materialised are not started by these conditions: a new workload file is
registered by the ``source_files`` sensor and analysed when asked (``solar analyze``, or
"Materialize" in the UI).

``reanalysis_sensor`` evaluates the conditions (every 30 s, on by default in ``dagster dev``);
``reanalyse_stale`` is the periodic sweep: a nightly schedule (off by default) whose run
re-materialises every partition Dagster reports stale, upstream first, in one process.
"""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

from collections import defaultdict

import dagster as dg

from solar_assets.dagster_defs.conditions import REANALYSE, REPORT  # noqa: F401 - re-exported

reanalysis_sensor = dg.AutomationConditionSensorDefinition(
    "solar_reanalysis", target=dg.AssetSelection.all(), minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Re-materialises stale partitions (REANALYSE / REPORT conditions).",
)


def stale_partitions(instance: dg.DagsterInstance, asset_graph) -> dict[dg.AssetKey, list[str | None]]:
    """Every materialised (asset, partition) Dagster reports STALE, in topological order of assets."""
    # Dagster's own staleness (what the UI shows), through its internal resolver: pinned dagster
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
    from dagster._time import get_current_datetime

    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=asset_graph)
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=asset_graph, loading_context=view)
    stale: dict[dg.AssetKey, list[str | None]] = {}
    for level in asset_graph.toposorted_asset_keys_by_level:
        for key in sorted(level):
            node = asset_graph.get(key)
            if not node.is_materializable:
                continue
            partitions = [None] if node.partitions_def is None else \
                node.partitions_def.get_partition_keys(dynamic_partitions_store=instance)
            found = [p for p in partitions if resolver.get_status(key, p) == StaleStatus.STALE]
            if found:
                stale[key] = found
    return stale


def upstream_most(stale: dict[dg.AssetKey, list[str | None]], asset_graph) -> dict[dg.AssetKey, list[str | None]]:
    """The stale assets none of whose ancestors is stale: what can run now without reading an
    input that is about to change."""
    return {k: ps for k, ps in stale.items() if not (asset_graph.get_ancestor_asset_keys(k) & set(stale))}


def reanalyse(instance: dg.DagsterInstance, defs: dg.Definitions, max_waves: int = 16) -> list[tuple[str, str | None]]:
    """Materialise every stale partition in-process, upstream first, in waves until nothing is
    stale (a partition whose run failed is not retried in the same sweep). Returns what ran."""
    from solar_assets.dagster_defs.instance import QUIET_LOGGERS

    graph = defs.resolve_asset_graph()
    assets = [a for a in defs.assets or () if isinstance(a, (dg.AssetsDefinition, dg.SourceAsset))]
    resources = defs.resources or {}
    ran: list[tuple[str, str | None]] = []
    tried: set[tuple[dg.AssetKey, str | None]] = set()
    for _ in range(max_waves):
        stale = {k: [p for p in ps if (k, p) not in tried] for k, ps in stale_partitions(instance, graph).items()}
        wave = upstream_most({k: ps for k, ps in stale.items() if ps}, graph)
        if not wave:
            break
        by_partition: dict[str | None, list[dg.AssetKey]] = defaultdict(list)
        for key, partitions in wave.items():
            for partition in partitions:
                by_partition[partition].append(key)
                tried.add((key, partition))
        for partition, keys in by_partition.items():
            result = dg.materialize(assets, selection=keys, partition_key=partition, instance=instance,
                                    resources=resources, run_config=QUIET_LOGGERS, raise_on_error=False,
                                    tags={"solar/trigger": "reanalyse_stale"})
            ran += [(k.to_user_string(), partition) for k in keys if result.is_node_success(k.path[-1])]
    for key in _behind(graph, ran):  # see _behind: Dagster's staleness misses them at scale
        result = dg.materialize(assets, selection=[key], instance=instance, resources=resources,
                                run_config=QUIET_LOGGERS, raise_on_error=False,
                                tags={"solar/trigger": "reanalyse_stale"})
        if result.is_node_success(key.path[-1]):
            ran.append((key.to_user_string(), None))
    return ran


def _behind(asset_graph, ran: list[tuple[str, str | None]]) -> list[dg.AssetKey]:
    """Unpartitioned assets (``headroom_report``) with a parent partition re-run in this sweep
    after their own last run in it. From 100 upstream partitions on, Dagster records such an
    input as one unpartitioned dependency and no longer reports the child stale
    (``SKIP_PARTITION_DATA_VERSION_DEPENDENCY_THRESHOLD``), so the sweep runs them itself."""
    last = {asset: i for i, (asset, _) in enumerate(ran)}
    behind = []
    for key in asset_graph.toposorted_asset_keys:
        node = asset_graph.get(key)
        if node.partitions_def is not None or not node.is_materializable:
            continue
        parents = [last[p.to_user_string()] for p in node.parent_keys if p.to_user_string() in last]
        if parents and max(parents) > last.get(key.to_user_string(), -1):
            behind.append(key)
    return behind


@dg.op(required_resource_keys={"solar"})
def reanalyse_stale_partitions(context: dg.OpExecutionContext) -> list:
    """Materialise what is stale, upstream first (see ``reanalyse``)."""
    from solar_assets.dagster_defs.assets import ASSETS
    from solar_assets.dagster_defs.instance import resources_for
    from solar_assets.dagster_defs.sources import SOURCE_ASSETS

    defs = dg.Definitions(assets=[*SOURCE_ASSETS, *ASSETS], resources=resources_for(context.resources.solar))
    ran = reanalyse(context.instance, defs)
    context.add_output_metadata({"materialised": dg.MetadataValue.md(
        "\n".join(f"- {k}[{p}]" if p else f"- {k}" for k, p in ran) or "nothing was stale")})
    return ran


@dg.job(description="Re-materialise every stale asset partition, upstream first.")
def reanalyse_stale_job():
    reanalyse_stale_partitions()


@dg.schedule(cron_schedule="0 3 * * *", job=reanalyse_stale_job, default_status=dg.DefaultScheduleStatus.STOPPED)
def reanalyse_stale(context: dg.ScheduleEvaluationContext):
    """Nightly sweep: when something is stale, one run that re-materialises it all, upstream first
    (catches what the event-driven conditions missed: a stopped sensor, a failed run)."""
    stale = stale_partitions(context.instance, context.repository_def.asset_graph)
    if not stale:
        return dg.SkipReason("nothing is stale")
    count = sum(len(ps) for ps in stale.values())
    return dg.RunRequest(tags={"solar/stale": str(count)})
