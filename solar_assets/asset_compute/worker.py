"""In a worker of ``solar analyze`` (Dagster path): one file's asset partitions, without Dagster.

The worker (``solar_assets.workers``: time and memory limits, one process per call, state
restored between files) calls each asset's function (``asset_compute.graph``) on the file's
partitions in the order of the asset graph: the workload assets, then the bound assets on each
hardware. Values go where Dagster's IO manager reads them (``asset_compute.storage``); each asset
partition gives a ``PartitionEvent`` (data version, code version, metadata, parents; or the
one-line failure, and "upstream failed" below it), written to a file of the call's directory that
the call's Dagster step logs (``dagster_defs.step_events``).

The pictures of ``einsum_graph`` and ``sol_bounds`` are left to the CLI when the call says so
(``defer_pictures``: ``asset_compute.pictures`` draws them in a thread of the CLI while this
worker goes on with the next file).
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from solar_assets.asset_compute.graph import BOUND_NODES, HARDWARE_NODE, NODES, WORKLOAD_NODES, AssetNode, workload_nodes
from solar_assets.asset_compute.keys import Partition, PartitionEvent
from solar_assets.asset_compute.settings import AssetSettings
from solar_assets.asset_compute.storage import file_version, store_value, write_events
from solar_assets.chain.artifacts import WorkloadResult
from solar_assets.errors import SolarError, one_line, with_path
from solar_assets.validate.errors import ValidationFailed

log = logging.getLogger(__name__)

DRAWN_BY_CLI = ("einsum_graph", "sol_bounds")
"""The assets whose pictures a deferring call leaves to the CLI (``asset_compute.pictures``)."""


def partition_of(node: AssetNode, workload: str, hardware: str | None) -> Partition:
    if node.partitioning == "workload":
        return Partition(node.name, workload)
    if node.partitioning == "hardware":
        return Partition(node.name, hardware)
    return Partition.pair(node.name, workload, hardware or "")


def parents_of(node: AssetNode, workload: str, hardware: str | None) -> dict[str, Partition]:
    """``input name -> Partition`` of each input, then each observed source file."""
    out = {name: partition_of(NODES[name], workload, hardware) for name in node.inputs}
    for source in node.sources:
        out[source] = Partition(source, workload if source == "workload_file" else hardware)
    return out


def compute(node: AssetNode, partition: Partition, inputs: Mapping[str, Any], settings: AssetSettings,
            parents: Sequence[Partition], **options: Any) -> tuple[PartitionEvent, Any]:
    """``node``'s function on ``partition``: what its Dagster step computes, with its metadata and
    data version; a stage's error becomes a failed event with the one line the step's failure
    would carry (a failed validation with its per-output table)."""
    from solar_assets.asset_compute.workload import validation_metadata

    kwargs = {name: inputs[name] for name in node.inputs}
    if node.takes_key:
        kwargs["key"] = partition.key
    try:
        out = node.fn(**kwargs, solar=settings, **options)
    except ValidationFailed as e:
        return PartitionEvent(partition, node.code_version, tuple(parents), error=one_line(str(e)),
                              metadata=validation_metadata(e.result)), None
    except SolarError as e:
        return PartitionEvent(partition, node.code_version, tuple(parents), error=one_line(str(e))), None
    except Exception as e:  # the step would fail "unexpectedly": say which and why, on one line
        log.debug("%s[%s] failed", partition.asset, partition.key, exc_info=True)
        return PartitionEvent(partition, node.code_version, tuple(parents),
                              error=f"{partition.asset} failed unexpectedly: {type(e).__name__}: {e}"), None
    return PartitionEvent(partition, node.code_version, tuple(parents), data_version=out.data_version,
                          metadata=dict(out.metadata)), out.value


def upstream_failed(node: AssetNode, partition: Partition, failed: Partition) -> PartitionEvent:
    return PartitionEvent(partition, node.code_version, error=(
        f"not materialised: its input {failed.asset}[{failed.key}] failed"), upstream_failed=True)


def events_file(call_dir: str | Path, path: str) -> Path:
    return Path(call_dir) / f"{hashlib.sha256(path.encode()).hexdigest()[:16]}.pickle"


def killed_events(key: str, error: str) -> list[PartitionEvent]:
    """A worker killed before it wrote a file's events (time or memory limit, a crash): its
    workload partition's assets as failed with its error."""
    nodes = workload_nodes()
    first = partition_of(nodes[0], key, None)
    return [PartitionEvent(first, nodes[0].code_version, error=error),
            *(upstream_failed(n, partition_of(n, key, None), first) for n in nodes[1:])]


class _Walk:
    """One file's asset partitions in graph order: each computed from its inputs' values, its
    event kept, its value stored; a failure stops what depends on it (``upstream_failed``)."""

    def __init__(self, path: str, options: dict[str, Any]) -> None:
        from solar_assets.asset_compute.keys import split_train_key
        from solar_assets.workloads.source import workload_name
        from solar_assets.workloads.training import train_name

        self.path = path
        self.settings = AssetSettings(**options["settings"])
        self.key, self.home = options["keys"][path], self.settings.home
        self.result = WorkloadResult(workload=train_name(workload_name(path), split_train_key(self.key)[1]), path=path)
        self.defer = bool(options.get("defer_pictures"))
        self.bound_nodes = [n for n in BOUND_NODES if options["inverse"] or n.name != "inverse_roofline"]
        self.events: list[PartitionEvent] = []
        self.values: dict[Partition, Any] = {}
        self.failed: dict[Partition, Partition] = {}  # partition -> the failed partition that stopped it

    def run(self, node: AssetNode, hardware: str | None) -> None:
        partition = partition_of(node, self.key, hardware)
        parents = parents_of(node, self.key, hardware)
        stopped = next((self.failed[p] for p in parents.values() if p in self.failed), None)
        if stopped is not None:
            self.events.append(upstream_failed(node, partition, stopped))
            self.failed[partition] = stopped
            return
        inputs = {name: self.values[p] for name, p in parents.items() if p in self.values}
        extra = {"draw": False} if self.defer and node.name in DRAWN_BY_CLI else {}
        event, value = compute(node, partition, inputs, self.settings, list(parents.values()), **extra)
        self.events.append(event)
        if event.error is not None:
            self.failed[partition] = partition
            if self.result.error is None:
                self.result.error = with_path(event.error, self.path)
            return
        store_value(self.home, partition, value)
        self.values[partition] = value

    def bounds(self, hardware_names: Sequence[str]) -> None:
        """The bound assets on each part, after its ``hardware_spec``."""
        start = time.perf_counter()
        for name in hardware_names:
            spec = partition_of(HARDWARE_NODE, self.key, name)
            event, value = _spec(spec, self.settings)
            if event.error is not None:  # recorded by the CLI, which computes the spec too
                self.result.error = with_path(event.error, Path(self.settings.hardware_dir) / f"{name}.yaml")
                break
            self.values[spec] = value
            for node in self.bound_nodes:
                self.run(node, name)
            if self.result.error is not None:
                break
            self.result.per_op += _per_op_rows(self.result.workload, self.values, self.key, name)
        self.result.seconds["bounds"] = time.perf_counter() - start

    def finish(self, call_dir: str) -> WorkloadResult:
        write_events(events_file(call_dir, self.path), self.events)
        return self.result


def compute_workload(path: str, cache_dir: str | None, options: dict[str, Any]) -> WorkloadResult:
    """The workload partition's assets, then its bound assets on each hardware; values into the
    IO manager's storage, the events to ``events_file(call_dir, path)``. The result carries the
    first error and each pair's per-op rows (as the plain path's worker returns them).

    ``options``: ``settings`` (``AssetSettings.as_dict()``), ``keys`` (path -> workload key),
    ``hardware`` (names), ``inverse`` (compute ``inverse_roofline``), ``call_dir``,
    ``defer_pictures``, ``on_demand`` (also the on-demand nodes: ``--ski-slope``)."""
    walk = _Walk(path, options)
    try:
        start = time.perf_counter()
        for node in workload_nodes(bool(options.get("on_demand"))):
            walk.run(node, None)
        walk.result.seconds["workload stages"] = time.perf_counter() - start
        if walk.result.error is None:
            walk.bounds(options["hardware"])
    except Exception as e:  # the worker must answer for its file: one line naming it
        log.debug("%s failed", path, exc_info=True)
        walk.result.error = with_path(f"the assets failed unexpectedly: {type(e).__name__}: {e}", path)
    return walk.finish(options["call_dir"])


def compute_bounds(path: str, options: dict[str, Any], hardware_names: Sequence[str]) -> WorkloadResult:
    """Only the bound assets of ``path`` on ``hardware_names``, from the stored values of its
    workload assets (a spec edited since the last call, a part the file has not been bounded on):
    no trace, golden run or validation, and no workload code, so no worker. ``options`` as for
    ``compute_workload``."""
    from solar_assets.asset_compute.storage import load_value

    walk = _Walk(path, options)
    try:
        for node in WORKLOAD_NODES:
            if any(node.name in n.inputs for n in walk.bound_nodes):
                partition = partition_of(node, walk.key, None)
                walk.values[partition] = load_value(walk.home, partition)
        walk.bounds(hardware_names)
    except Exception as e:  # one line naming the file, as a worker's would
        log.debug("%s failed", path, exc_info=True)
        walk.result.error = with_path(f"the bound assets failed unexpectedly: {type(e).__name__}: {e}", path)
    return walk.finish(options["call_dir"])


_SPECS: dict[tuple[str, str, int, int], tuple[PartitionEvent, Any]] = {}


def _spec(partition: Partition, settings: AssetSettings) -> tuple[PartitionEvent, Any]:
    """``hardware_spec`` of a part, once per worker and file version (path, mtime, size): every
    file of a call reads the same YAML (0.3 s of 20 files)."""
    version = file_version(Path(settings.hardware_dir) / f"{partition.key}.yaml")
    key = (str(partition.key), *version)
    if key not in _SPECS or not version[2]:  # a spec not in the dir: computed (and failing) each time
        _SPECS[key] = compute(HARDWARE_NODE, partition, {}, settings, [])
    return _SPECS[key]


def _per_op_rows(workload: str, values: dict[Partition, Any], key: str, hardware: str) -> list[Any]:
    """The pair's per-op rows from the values just computed, for the CLI's ``per_op.csv`` (else
    the CLI lifts every graph again from the cached IR, importing torch: ~2 s of a call); a
    breakdown that cannot be made is left out (the CLI logs it), the bounds stand."""
    from solar_assets.asset_compute.bounds import per_op_or_why

    graph = values.get(Partition("einsum_graph", key))
    bounds = values.get(Partition.pair("sol_bounds", key, hardware))
    if graph is None or bounds is None:
        return []
    rows = per_op_or_why(workload, graph, bounds.bounds, hardware)
    return rows if isinstance(rows, list) else []
