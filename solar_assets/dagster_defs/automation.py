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
re-materialises every stale partition (``staleness``: from the code and data versions Dagster
recorded), upstream first, in one process.
"""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

from collections import defaultdict

import dagster as dg

from solar_assets.dagster_defs.conditions import REANALYSE, REPORT  # noqa: F401 - re-exported
from solar_assets.dagster_defs.staleness import stale_partitions, upstream_most

reanalysis_sensor = dg.AutomationConditionSensorDefinition(
    "solar_reanalysis", target=dg.AssetSelection.all(), minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Re-materialises stale partitions (REANALYSE / REPORT conditions).",
)


def reanalyse(instance: dg.DagsterInstance, defs: dg.Definitions, max_waves: int = 16) -> list[tuple[str, str | None]]:
    """Materialise every stale partition (``staleness``) in-process, upstream first, in waves until
    nothing is stale (a partition whose run failed is not retried in the same sweep). Returns what ran."""
    from solar_assets.dagster_defs.instance import QUIET_LOGGERS

    assets = [a for a in defs.assets or () if isinstance(a, (dg.AssetsDefinition, dg.SourceAsset))]
    resources = defs.resources or {}
    ran: list[tuple[str, str | None]] = []
    tried: set[tuple[dg.AssetKey, str | None]] = set()
    for _ in range(max_waves):
        stale = {k: [p for p in ps if (k, p) not in tried] for k, ps in stale_partitions(instance, defs).items()}
        wave = upstream_most({k: ps for k, ps in stale.items() if ps}, defs)
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
    return ran


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
    from solar_assets.dagster_defs.assets import ASSETS
    from solar_assets.dagster_defs.sources import SOURCE_ASSETS

    stale = stale_partitions(context.instance, [*SOURCE_ASSETS, *ASSETS])
    if not stale:
        return dg.SkipReason("nothing is stale")
    count = sum(len(ps) for ps in stale.values())
    return dg.RunRequest(tags={"solar/stale": str(count)})
