"""One Dagster run per ``solar analyze`` call: the workers compute, one run records.

A ``dg.materialize`` per partition cost 1.1–1.9 s of fixed Dagster machinery each (run creation,
step events, one SQLite transaction per event: ``docs/dagster.md``, overhead), so 100 workloads
paid it 200 times. Here a worker (``solar_assets.asset_compute.worker``, no Dagster) calls each
asset's function on its partition, in the order of the asset graph — the same code, metadata and
content-hash data version as a Dagster step — stores each value where the filesystem IO manager
reads it (``$SOLAR_HOME/storage/<asset>/<partition>``), and returns a ``PartitionEvent`` per asset
partition: its data version, code version, metadata and parents, or the failure that stopped it.

The CLI then runs **one** Dagster run, of ``headroom_report`` and its checks; the report step
first writes every event of the call (``record_events``) in a single database transaction, as
materialisations (or failures) of that run, with the tags a Dagster step writes
(``dagster/data_version``, ``dagster/code_version``, ``dagster/input_data_version/<parent>``,
``dagster/input_event_pointer/<parent>``), so staleness, the re-analysis conditions, lineage and
the UI read them exactly as if each partition had had its own run. A failed partition's asset gets
an ``ASSET_FAILED_TO_MATERIALIZE`` event (and its downstream ones, "upstream failed"); the other
partitions land. The UI's "Materialize", the automation sensor and the nightly sweep keep the
regular per-partition runs.
"""
# no `from __future__ import annotations`: the asset modules read annotations at runtime

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from solar_assets.asset_compute.keys import Partition, PartitionEvent
from solar_assets.asset_compute.storage import read_events
from solar_assets.dagster_defs.metadata import to_dagster

log = logging.getLogger(__name__)


def asset_key(partition: Partition) -> dg.AssetKey:
    return dg.AssetKey(partition.asset)


# ---------------------------------------------------------------------------- writing the events
def latest_versions(instance: dg.DagsterInstance, asset_key: dg.AssetKey, partitions: Iterable[str | None],
                    observation: bool = False) -> dict[str | None, tuple[str, int]]:
    """``partition -> (data version, storage id)`` of each partition's latest materialisation
    (observation, for a source asset); two queries per asset, whatever the number of partitions."""
    from solar_assets.dagster_defs.sources import entry_data_version

    kind = dg.DagsterEventType.ASSET_OBSERVATION if observation else dg.DagsterEventType.ASSET_MATERIALIZATION
    wanted = {p for p in partitions if p is not None}
    out: dict[str | None, tuple[str, int]] = {}
    if wanted:
        latest = instance.event_log_storage.get_latest_storage_id_by_partition(asset_key, kind, wanted)
        ids = {v: k for k, v in latest.items()}
    else:
        record = instance.get_latest_data_version_record(asset_key, is_source=observation)
        ids = {record.storage_id: None} if record else {}
    if not ids:
        return out
    records_filter = dg.AssetRecordsFilter(asset_key=asset_key, storage_ids=list(ids))
    fetch = instance.fetch_observations if observation else instance.fetch_materializations
    for record in fetch(records_filter, limit=len(ids)).records:
        version = entry_data_version(record.event_log_entry)
        if version is not None:
            out[ids[record.storage_id]] = (version, record.storage_id)
    return out


def _entry(event: PartitionEvent, tags: dict[str, str], run_id: str, job_name: str) -> Any:
    from dagster._core.events import (
        AssetFailedToMaterializeData,
        AssetObservationData,
        DagsterEvent,
        DagsterEventType,
        StepMaterializationData,
    )
    from dagster._core.events.log import EventLogEntry

    p = event.partition
    step_key = p.asset
    if event.observation:
        kind = DagsterEventType.ASSET_OBSERVATION
        data: Any = AssetObservationData(dg.AssetObservation(asset_key(p), partition=p.key, tags=tags))
    elif event.error is None:
        kind = DagsterEventType.ASSET_MATERIALIZATION
        data = StepMaterializationData(dg.AssetMaterialization(asset_key(p), partition=p.key,
                                                                metadata=to_dagster(event.metadata), tags=tags))
    else:
        from dagster._core.definitions.events import (
            AssetMaterializationFailure,
            AssetMaterializationFailureReason,
            AssetMaterializationFailureType,
        )

        reason = AssetMaterializationFailureReason.UPSTREAM_FAILED_TO_MATERIALIZE if event.upstream_failed else \
            AssetMaterializationFailureReason.FAILED_TO_MATERIALIZE
        data = AssetFailedToMaterializeData(AssetMaterializationFailure(
            asset_key=asset_key(p), partition=p.key, failure_type=AssetMaterializationFailureType.FAILED,
            reason=reason, description=event.error, metadata={"error": dg.MetadataValue.text(event.error)}))
        kind = DagsterEventType.ASSET_FAILED_TO_MATERIALIZE
    dagster_event = DagsterEvent(event_type_value=kind.value, job_name=job_name, step_key=step_key,
                                 event_specific_data=data)
    message = event.error or f"{kind.value} {p.asset}[{p.key}]"
    return EventLogEntry(error_info=None, level=logging.ERROR if event.error else logging.INFO, user_message=message,
                         run_id=run_id, timestamp=time.time(), step_key=step_key, job_name=job_name,
                         dagster_event=dagster_event)


def _tags(event: PartitionEvent, inputs: Mapping[Partition, tuple[str, int] | None]) -> dict[str, str]:
    """The tags a Dagster step writes on a materialisation (``execute_step._build_data_version_tags``)."""
    from dagster._core.definitions.data_version import (
        CODE_VERSION_TAG,
        DATA_VERSION_IS_USER_PROVIDED_TAG,
        DATA_VERSION_TAG,
        DEFAULT_DATA_VERSION,
        NULL_EVENT_POINTER,
        get_input_data_version_tag,
        get_input_event_pointer_tag,
    )

    p = event.partition
    tags: dict[str, str] = {}
    if event.observation:
        tags = {DATA_VERSION_TAG: event.data_version or "", DATA_VERSION_IS_USER_PROVIDED_TAG: "true"}
    elif event.error is None:
        tags[CODE_VERSION_TAG] = event.code_version or ""
        for parent in event.parents:
            found = inputs.get(parent)
            tags[get_input_data_version_tag(asset_key(parent))] = found[0] if found else DEFAULT_DATA_VERSION.value
            tags[get_input_event_pointer_tag(asset_key(parent))] = str(found[1]) if found else NULL_EVENT_POINTER
        tags[DATA_VERSION_TAG] = event.data_version or ""
        tags[DATA_VERSION_IS_USER_PROVIDED_TAG] = "true"
    if p.dims:
        tags.update({f"dagster/partition/{d}": v for d, v in p.dims})
    return tags


def record_events(instance: dg.DagsterInstance, events: Sequence[PartitionEvent], run_id: str,
                  job_name: str) -> int:
    """Write ``events`` (in dependency order) as events of run ``run_id``: one transaction on a SQL
    event log (SQLite, Postgres), else one ``store_event`` each. A parent written earlier in the
    batch is pointed to by its new storage id; any other by its latest materialisation
    (observation, for the source files). Returns the number of events written."""
    in_batch = {e.partition for e in events}
    outside: dict[tuple[str, bool], set[str | None]] = {}
    for event in events:
        for parent in event.parents:
            if parent not in in_batch:
                outside.setdefault((parent.asset, parent.asset.endswith("_file")), set()).add(parent.key)
    known: dict[Partition, tuple[str, int] | None] = {}
    for (asset, observation), keys in outside.items():
        found = latest_versions(instance, dg.AssetKey(asset), keys, observation=observation)
        for parent in {p for e in events for p in e.parents if p.asset == asset}:
            known[parent] = found.get(parent.key)
    storage = instance.event_log_storage
    batched = hasattr(storage, "prepare_insert_event") and hasattr(storage, "_store_asset_event") and \
        hasattr(storage, "index_transaction")
    if batched:
        entries, ids, last = [], [], {}
        with storage.index_transaction() as conn:
            for event in events:
                entry = _entry(event, _tags(event, known), run_id, job_name)
                event_id = int(conn.execute(storage.prepare_insert_event(entry)).inserted_primary_key[0])
                entries.append(entry)
                ids.append(event_id)
                if event.error is None:
                    known[event.partition] = (event.data_version or "", event_id)
                    last[event.partition.asset] = (entry, event_id)
            tagged = [(e, i) for e, i in zip(entries, ids) if e.dagster_event_type in _TAGGED]
            if tagged:
                storage._store_asset_event_tags(conn, [e for e, _ in tagged], [i for _, i in tagged])
            for entry, event_id in last.values():  # the asset table keeps each asset's latest event
                storage._store_asset_event(conn, entry, event_id)
    else:  # another storage: Dagster's own path, one event at a time
        for event in events:
            entry = _entry(event, _tags(event, known), run_id, job_name)
            storage.store_event(entry)
            if event.error is None:
                found = latest_versions(instance, asset_key(event.partition), [event.partition.key],
                                        observation=event.observation)
                known[event.partition] = found.get(event.partition.key)
    return len(events)


_TAGGED = (dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.ASSET_OBSERVATION)


def record_call(context: dg.AssetExecutionContext, batch_file: str | Path) -> int:
    """In ``headroom_report``'s step of a ``solar analyze`` run: record the call's partition
    events as this run's, then make the step read its inputs' versions afresh (it fetched them
    before the events existed), so the report's own lineage points at the bounds just recorded."""
    events = read_events(batch_file)
    count = record_events(context.instance, events, context.run_id, context.job_name)
    step = getattr(context, "_step_execution_context", None)
    if step is not None and hasattr(step, "wipe_input_asset_version_info"):
        for key in context.assets_def.keys_by_input_name.values():
            step.wipe_input_asset_version_info(key)
    log.debug("recorded %d partition events in run %s", count, context.run_id)
    return count
