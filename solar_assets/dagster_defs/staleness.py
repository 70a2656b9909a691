"""Which materialised partitions are stale, read from Dagster's public records.

A partition is stale when its latest materialisation was made by another code version than the
asset's definition declares, or when an input partition it reads (by the asset's partition
mapping) got an event after the one it read with another data version than that partition had
then — the rule of Dagster's own resolver, so the verdict is the one the UI shows ("Unsynced";
``tests`` compare the two). What a partition read is what its materialisation recorded: a pointer
to the newest input event it read (Dagster's ``dagster/input_event_pointer/<asset>`` tag, written by
Dagster's steps and by ``step_events``) and, for an unpartitioned input, its data version
(``dagster/input_data_version/<asset>``). A changed dependency makes its direct children stale,
not their descendants (those follow once the children re-run with new data).

Where Dagster stops tracking an input partition by partition (from 100 input partitions on:
``headroom_report`` over ``sol_bounds``), this rule does not. An input never materialised when the
child ran (pointer ``NULL``) makes nothing stale.
"""
# no `from __future__ import annotations`: imported by modules Dagster reads at runtime

import logging
from collections.abc import Mapping, Sequence

import dagster as dg
import networkx as nx

from solar_assets.dagster_defs.step_events import (
    CODE_VERSION_TAG,
    DATA_VERSION_TAG,
    INPUT_DATA_VERSION_PREFIX,
    INPUT_EVENT_POINTER_PREFIX,
    NULL_POINTER,
    fetch_records,
    latest_records,
)

log = logging.getLogger(__name__)

Stale = dict[dg.AssetKey, list[str | None]]


def _version(record: dg.EventLogRecord | None) -> str | None:
    return None if record is None else (record.event_log_entry.tags or {}).get(DATA_VERSION_TAG)


class _Graph:
    """The assets of ``defs`` as Dagster declares them: keys, parents, partitions, code versions."""

    def __init__(self, assets: Sequence[object], instance: dg.DagsterInstance):
        self.instance = instance
        self.parents: dict[dg.AssetKey, set[dg.AssetKey]] = {}
        self.code_version: dict[dg.AssetKey, str | None] = {}
        self.partitions: dict[dg.AssetKey, dg.PartitionsDefinition | None] = {}
        self.observed: set[dg.AssetKey] = set()
        self.mappings: dict[tuple[dg.AssetKey, dg.AssetKey], dg.PartitionMapping] = {}
        for a in assets:
            if isinstance(a, dg.SourceAsset):
                self.observed.add(a.key)
                self.partitions[a.key] = a.partitions_def
            elif isinstance(a, dg.AssetsDefinition):
                for key in a.keys:
                    self.parents[key] = set(a.asset_deps[key])
                    self.code_version[key] = a.code_versions_by_key.get(key)
                    self.partitions[key] = a.partitions_def
                    for dep in self.parents[key]:
                        mapping = a.get_partition_mapping(dep)
                        if mapping is not None:
                            self.mappings[(key, dep)] = mapping
        dag = nx.DiGraph()
        dag.add_nodes_from(self.parents)
        dag.add_edges_from((p, k) for k, ps in self.parents.items() for p in ps if p in self.parents)
        self.order = list(nx.lexicographical_topological_sort(dag, key=lambda k: k.to_user_string()))

    def partition_keys(self, key: dg.AssetKey) -> list[str] | None:
        definition = self.partitions.get(key)
        return None if definition is None else list(definition.get_partition_keys(dynamic_partitions_store=self.instance))


Assets = dg.Definitions | Sequence[object]


def _assets(assets: Assets) -> list[object]:
    return list(assets.assets or ()) if isinstance(assets, dg.Definitions) else list(assets)


def stale_partitions(instance: dg.DagsterInstance, assets: Assets) -> Stale:
    """Every materialised (asset, partition) of ``assets`` (the definitions, or their asset and
    source-asset definitions) that is stale (module docstring), assets in topological order,
    partitions in the order their definition lists them."""
    graph = _Graph(_assets(assets), instance)
    stale: Stale = {}
    for key in graph.order:
        partitions = graph.partition_keys(key)
        records = latest_records(instance, key, partitions)
        if not records:
            continue
        found = _stale_of(graph, key, records)
        ordered = [p for p in (partitions or [None]) if p in found]
        if ordered:
            stale[key] = ordered
    return stale


def _stale_of(graph: _Graph, key: dg.AssetKey, records: Mapping[str | None, dg.EventLogRecord]) -> set[str | None]:
    declared = graph.code_version[key]
    stale = {p for p, r in records.items()
             if declared is not None and (r.event_log_entry.tags or {}).get(CODE_VERSION_TAG) != declared}
    for p in stale:
        log.debug("%s[%s]: code version %s, declared %s", key.to_user_string(), p,
                  (records[p].event_log_entry.tags or {}).get(CODE_VERSION_TAG), declared)
    for dep in sorted(graph.parents[key], key=lambda k: k.to_user_string()):
        name = dep.to_user_string()
        tags = {p: (r.event_log_entry.tags or {}) for p, r in records.items() if p not in stale}
        pointers = {p: int(t[INPUT_EVENT_POINTER_PREFIX + name]) for p, t in tags.items()
                    if t.get(INPUT_EVENT_POINTER_PREFIX + name, NULL_POINTER) != NULL_POINTER}
        if not pointers:
            continue
        if graph.partitions.get(dep) is None:
            now = _version(latest_records(graph.instance, dep, None, dep in graph.observed).get(None))
            changed = {p for p in pointers if tags[p].get(INPUT_DATA_VERSION_PREFIX + name) != now}
        else:
            changed = _updated(graph, key, dep, pointers)
        for p in changed:
            log.debug("%s[%s]: its input %s has a new data version", key.to_user_string(), p, name)
        stale |= changed
    return stale


def _dep_partitions(graph: _Graph, key: dg.AssetKey, partition: str | None, dep: dg.AssetKey) -> list[str]:
    """The partitions of the partitioned input ``dep`` that ``key``'s ``partition`` reads, by the
    asset's partition mapping (Dagster's defaults where it declares none)."""
    mapping = graph.mappings.get((key, dep))
    if isinstance(mapping, dg.SpecificPartitionsPartitionMapping):
        return list(mapping.partition_keys)
    own, theirs = graph.partitions.get(key), graph.partitions.get(dep)
    if partition is None:
        return graph.partition_keys(dep) or []
    if isinstance(own, dg.MultiPartitionsDefinition) and own != theirs:
        dims = own.get_partition_key_from_str(partition).keys_by_dimension
        name = getattr(mapping, "partition_dimension_name", None) or next(
            d.name for d in own.partitions_defs if d.partitions_def == theirs)
        return [dims[name]]
    return [partition]


def _updated(graph: _Graph, key: dg.AssetKey, dep: dg.AssetKey, pointers: Mapping[str | None, int]) -> set[str | None]:
    """The partitions of ``key`` one of whose input partitions got an event after the one it read
    (its pointer) with another data version than it had then — Dagster's rule for a partitioned
    dependency."""
    observation = dep in graph.observed
    reads = {p: _dep_partitions(graph, key, p, dep) for p in pointers}
    latest = latest_records(graph.instance, dep, {d for ds in reads.values() for d in ds}, observation)
    before: dict[tuple[str, int], str | None] = {}
    changed = set()
    for p, pointer in pointers.items():
        for d in reads[p]:
            now = latest.get(d)
            if now is None or now.storage_id <= pointer:
                continue
            if (d, pointer) not in before:
                found = fetch_records(graph.instance, dg.AssetRecordsFilter(asset_key=dep, asset_partitions=[d],
                                                                     before_storage_id=pointer + 1), observation, 1)
                before[(d, pointer)] = _version(found[0]) if found else None
            if before[(d, pointer)] != _version(now):
                changed.add(p)
                break
    return changed


def upstream_most(stale: Stale, assets: Assets) -> Stale:
    """The stale assets none of whose ancestors is stale: what can run now without reading an
    input that is about to change."""
    graph = _Graph(_assets(assets), None)  # type: ignore[arg-type]
    dag = nx.DiGraph((p, k) for k, ps in graph.parents.items() for p in ps)
    dag.add_nodes_from(graph.parents)
    return {k: ps for k, ps in stale.items() if not (nx.ancestors(dag, k) & set(stale))}
