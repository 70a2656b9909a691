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
``reanalyse_stale`` is the periodic sweep: a nightly schedule (off by default) that requests runs
of every stale partition (``staleness``: from the code and data versions Dagster recorded) whose
ancestors are all fresh, and ``reanalyse_stale_waves`` (a sensor) requests the next wave when those
runs finished, so each partition runs after its inputs settled. The runs are ordinary asset runs
the daemon launches with the configured run launcher and executor (the sweep once called
``dg.materialize`` from inside a job's op: in-process whatever was configured).
"""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

import datetime
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import dagster as dg

from solar_assets.dagster_defs.conditions import REANALYSE, REPORT  # noqa: F401 - re-exported
from solar_assets.dagster_defs.staleness import Assets, stale_partitions, upstream_most

reanalysis_sensor = dg.AutomationConditionSensorDefinition(
    "solar_reanalysis", target=dg.AssetSelection.all(), minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Re-materialises stale partitions (REANALYSE / REPORT conditions).",
)


SWEEP_TAG = "solar/sweep"  # the nightly sweep a run belongs to (its schedule tick)
WAVE_TAG = "solar/wave"  # its wave: 1 from the schedule, then one per settled wave (``reanalyse_stale_waves``)
TRIGGER_TAG, SWEEP_TRIGGER = "solar/trigger", "reanalyse_stale"
MAX_WAVES = 16  # the asset graph is 9 deep: a sweep past this is looping


def _graph_assets() -> list:
    from solar_assets.dagster_defs.assets import ASSETS
    from solar_assets.dagster_defs.sources import SOURCE_ASSETS

    return [*SOURCE_ASSETS, *ASSETS]


def _sweep_jobs() -> tuple[list[Any], dict[dg.AssetKey, str]]:
    """The sweep's asset jobs, one per partitions definition (Dagster's asset jobs hold assets of
    one partitioning), named after its dimensions; and the job of each asset."""
    from solar_assets.dagster_defs.assets import ASSETS

    groups: dict[str, list[dg.AssetKey]] = defaultdict(list)
    for a in ASSETS:
        partitions = a.partitions_def
        if isinstance(partitions, dg.MultiPartitionsDefinition):
            name = "_".join(d.name for d in partitions.partitions_defs)
        else:
            name = getattr(partitions, "name", None) or ("unpartitioned" if partitions is None else "static")
        groups[name] += list(a.keys)
    jobs = {name: dg.define_asset_job(f"reanalyse_{name}", selection=dg.AssetSelection.assets(*keys),
                                      description="A nightly sweep's runs of these assets (reanalyse_stale).")
            for name, keys in groups.items()}
    return list(jobs.values()), {key: f"reanalyse_{name}" for name, keys in groups.items() for key in keys}


SWEEP_JOBS, SWEEP_JOB_OF = _sweep_jobs()


def wave_requests(instance: dg.DagsterInstance, assets: Assets, sweep: str, wave: int,
                  tried: set[tuple[dg.AssetKey, str | None]]) -> list[dg.RunRequest]:
    """The runs of one wave of a sweep: each stale partition (``staleness``) none of whose
    ancestors is stale, not ``tried`` earlier in the sweep (a partition whose run failed is not
    retried in the same sweep); one run per partition key, with all its assets of the wave."""
    stale = {k: [p for p in ps if (k, p) not in tried] for k, ps in stale_partitions(instance, assets).items()}
    wave_partitions = upstream_most({k: ps for k, ps in stale.items() if ps}, assets)
    runs: dict[tuple[str, str | None], list[dg.AssetKey]] = defaultdict(list)
    for key, partitions in wave_partitions.items():
        for partition in partitions:
            runs[(SWEEP_JOB_OF[key], partition)].append(key)
    return [dg.RunRequest(run_key=f"{sweep}:{wave}:{job}:{partition}", job_name=job, partition_key=partition,
                          asset_selection=sorted(keys, key=str),
                          tags={SWEEP_TAG: sweep, WAVE_TAG: str(wave), TRIGGER_TAG: SWEEP_TRIGGER})
            for (job, partition), keys in runs.items()]


def _requested(runs: Sequence[dg.DagsterRun]) -> set[tuple[dg.AssetKey, str | None]]:
    """The (asset, partition) pairs ``runs`` were asked to materialise."""
    return {(key, run.tags.get("dagster/partition")) for run in runs for key in run.asset_selection or ()}


def reanalyse(instance: dg.DagsterInstance, defs: dg.Definitions, max_waves: int = MAX_WAVES) -> list[tuple[str, str | None]]:
    """The sweep's waves (``wave_requests``) run here, in-process, one after another, as the
    daemon runs the sensor's requests (the bench, the tests). Returns what ran."""
    from solar_assets.dagster_defs.instance import QUIET_LOGGERS

    assets = [a for a in defs.assets or () if isinstance(a, (dg.AssetsDefinition, dg.SourceAsset))]
    ran: list[tuple[str, str | None]] = []
    tried: set[tuple[dg.AssetKey, str | None]] = set()
    for wave in range(1, max_waves + 1):
        requests = wave_requests(instance, assets, "in-process", wave, tried)
        if not requests:
            break
        for request in requests:
            keys = list(request.asset_selection or ())
            tried.update((k, request.partition_key) for k in keys)
            result = dg.materialize(assets, selection=keys, partition_key=request.partition_key, instance=instance,
                                    resources=defs.resources or {}, run_config=QUIET_LOGGERS, raise_on_error=False,
                                    tags=request.tags)
            ran += [(k.to_user_string(), request.partition_key) for k in keys if result.is_node_success(k.path[-1])]
    return ran


@dg.op
def list_stale_partitions(context: dg.OpExecutionContext) -> None:
    """The sweep's first run: what was stale when it started, in its metadata (the audit); the
    re-analysis itself runs as asset runs, wave by wave (``reanalyse_stale_waves``)."""
    stale = stale_partitions(context.instance, _graph_assets())
    context.add_output_metadata({"stale": dg.MetadataValue.md("\n".join(
        f"- {k.to_user_string()}[{p}]" if p else f"- {k.to_user_string()}"
        for k, ps in sorted(stale.items(), key=lambda kv: str(kv[0])) for p in ps) or "nothing was stale")})


@dg.job(description="Start a sweep of every stale asset partition (the runs follow: solar_sweep_waves).")
def reanalyse_stale_job():
    list_stale_partitions()


@dg.schedule(cron_schedule="0 3 * * *", job=reanalyse_stale_job, default_status=dg.DefaultScheduleStatus.STOPPED)
def reanalyse_stale(context: dg.ScheduleEvaluationContext):
    """Nightly sweep (catches what the event-driven conditions missed: a stopped sensor, a failed
    run): when something is stale, a run that lists it (wave 0); ``reanalyse_stale_waves`` then
    requests the stale partitions as asset runs, upstream first, one wave after another."""
    if not stale_partitions(context.instance, _graph_assets()):
        return dg.SkipReason("nothing is stale")
    sweep = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%M:%S}-{uuid.uuid4().hex[:6]}"
    return dg.RunRequest(run_key=f"{sweep}:0", tags={SWEEP_TAG: sweep, WAVE_TAG: "0", TRIGGER_TAG: SWEEP_TRIGGER})


@dg.sensor(name="solar_sweep_waves", jobs=SWEEP_JOBS, minimum_interval_seconds=60,
           default_status=dg.DefaultSensorStatus.RUNNING)
def reanalyse_stale_waves(context: dg.SensorEvaluationContext):
    """The latest sweep's next wave, once every run of its last wave finished: what is stale then
    and was not requested yet in this sweep, upstream first; the daemon launches the runs with the
    configured run launcher and executor. Idle (one query) once the sweep is done: the cursor
    names it."""
    latest = context.instance.get_runs(filters=dg.RunsFilter(tags={TRIGGER_TAG: SWEEP_TRIGGER}), limit=1)
    sweep = latest[0].tags.get(SWEEP_TAG) if latest else None
    if sweep is None:
        return dg.SkipReason("no sweep has run")
    if context.cursor == f"{sweep}:done":
        return dg.SkipReason(f"sweep {sweep} is done")
    runs = context.instance.get_runs(filters=dg.RunsFilter(tags={SWEEP_TAG: sweep}))
    wave = max(int(r.tags.get(WAVE_TAG, "0")) for r in runs)
    if not all(r.is_finished for r in runs):
        return dg.SkipReason(f"sweep {sweep}: wave {wave} is running")
    requests = wave_requests(context.instance, _graph_assets(), sweep, wave + 1, _requested(runs)) \
        if wave < MAX_WAVES else []
    if not requests:
        context.update_cursor(f"{sweep}:done")
        return dg.SkipReason(f"sweep {sweep} is done after {wave} wave{'s' if wave != 1 else ''}")
    return requests
