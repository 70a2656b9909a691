"""Call records: what a ``solar analyze`` call recorded for a file, so a warm call skips its worker.

A warm call on unchanged files should do what Dagster is for: recompute only what changed. The
worker for a file costs seconds (a spawned process importing torch) even when every stage cache
hits, so after a call's report run succeeded the CLI writes, for each file whose every event of
the call succeeded, a **record** (``$SOLAR_HOME/call_records/``, ``cache_store.call_record_entry``):

- the file's **freshness key** (``freshness_key``): its bytes and the local modules it imports
  (``WorkloadSource.version``), its path and workload partition key, the target latency, the run
  options (``RunConfig``: translator, framework, fp32 policy, validation and node-wise budgets) and
  ``cache_store.environment_key()`` (solar's code, the installed libraries, every ``SOLAR_*``
  setting but ``SOLAR_HOME``);
- the sha256 of each hardware spec its bound partitions were computed from (``spec_versions``);
- each asset partition the call recorded for the file, with its data version, the storage id of
  its materialisation in the instance and its stored value's file
  (``asset_compute.storage.storage_path``), size and mtime;
- the result's workload name; the per-op rows the worker returned go to a file of their own
  beside it (``per_op_file``), read only when a report is written or printed with them, and the
  record holds their digest (``per_op_digest``): a warm call over KernelBench reads 69 MB less.

The next call, before any worker or Dagster import, looks the records up (``find_hits``): a record
whose key matches and whose stored files are all there, unchanged, is a hit (``Hit``); a part
whose spec changed since, or that the record has not seen, is the hit's ``stale`` hardware: only
its bound assets are computed again (``asset_compute.worker.compute_bounds``). In the thread that
prepares the instance, each hit is verified (``verify``): the latest materialisation of each
recorded partition is still the recorded one, by storage id (history wiped, a UI run
re-materialised it, a partition never recorded: a failed verification, and the file is computed
after all).

This module imports neither Dagster, torch nor numba (``verify`` imports Dagster when called).
"""
from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ir_schemas import PerOpRow
from solar_assets import cache_store
from solar_assets.errors import SolarError

if TYPE_CHECKING:
    import dagster as dg

    from solar_assets.chain.config import RunConfig
    from solar_assets.asset_compute.keys import PartitionEvent
    from solar_assets.workloads import WorkloadSource

log = logging.getLogger(__name__)

RECORD_FORMAT = 4  # bumped when the record's fields change: an older record is then a miss


class RecordedPartition(BaseModel):
    """One asset partition a call recorded for the file: its data version and its stored value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    asset: str
    partition: str  # the key as Dagster prints it (``gemm``, ``H100_SXM|gemm``)
    data_version: str
    storage_id: int  # of its materialisation in the instance (the latest one when recorded)
    storage: str  # relative to $SOLAR_HOME (``storage/sol_bounds/H100_SXM/gemm``)
    size: int
    mtime_ns: int
    hardware: str | None = None  # the part of a bound asset's partition; None for a workload asset


class CallRecord(BaseModel):
    """What a call recorded for one workload partition, and under which inputs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = RECORD_FORMAT
    freshness_key: str
    workload_key: str
    workload: str  # ``WorkloadResult.workload``
    path: str  # the path the recording call was given
    partitions: list[RecordedPartition]
    per_op_digest: str  # of the per-op rows in ``per_op_file`` (``per_op_digest``)
    hardware: dict[str, str] = {}  # part -> sha256 of the spec its bound partitions were computed from
    activity: list[str] = []  # ``WorkloadResult.activity`` of the run that computed it (its rows' notes)


# ---------------------------------------------------------------------------- the freshness key
def spec_versions(hardware_names: Sequence[str], hardware_dir: Path | None) -> dict[str, str]:
    """``name -> sha256`` of each spec file as the assets load it (``hardware_dir`` first, then the
    search path); a name that resolves to no file gives ``-`` (its assets fail: never recorded)."""
    from solar_assets.hardware.spec import HardwareError, _resolve

    out = {}
    for name in hardware_names:
        try:
            out[name] = cache_store.file_sha256(_resolve(name, hardware_dir))
        except (HardwareError, OSError):
            out[name] = "-"
    return out


def freshness_key(path: str | Path, workload_key: str, target_latency_s: float | None, run: RunConfig,
                  cache_dir: Path | None = None) -> str | None:
    """Everything a file's asset partitions in a call depend on but the specs, hashed (module
    docstring); None when the file cannot be read (never a hit: the worker says what is wrong)."""
    from solar_assets.workloads import read_workload_source

    try:
        src = read_workload_source(path, run.framework, cache_dir, train=run.train)  # with what it reads (workloads.reads)
    except (OSError, SolarError):
        return None
    return _key(src, path, workload_key, target_latency_s, run)


def _key(src: WorkloadSource, path: str | Path, workload_key: str, target_latency_s: float | None,
         run: RunConfig) -> str:
    parts = [f"record={RECORD_FORMAT}", src.version, src.framework, str(Path(path).resolve()), workload_key,
             f"target={target_latency_s!r}", repr(run), cache_store.environment_key()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def settled_freshness_key(before: str | None, path: str | Path, workload_key: str, target_latency_s: float | None,
                          run: RunConfig, cache_dir: Path | None = None) -> str | None:
    """The key to record a finished file under: ``before`` (the call's key), or, for a file no
    load had recorded the reads of when the call began (``WorkloadSource.reads_key``), the key
    with what its load recorded — the key the next call computes. None when anything else
    changed during the call (its bytes): that result is not recorded."""
    from solar_assets.workloads import read_workload_source
    from solar_assets.workloads.source import UNRECORDED

    if before is None:
        return None
    try:
        src = read_workload_source(path, run.framework, cache_dir, train=run.train)
    except (OSError, SolarError):
        return None
    now = _key(src, path, workload_key, target_latency_s, run)
    if now == before:
        return now
    unrecorded = replace(src, reads_sha256=UNRECORDED, reads_pending="")
    return now if _key(unrecorded, path, workload_key, target_latency_s, run) == before else None


# ---------------------------------------------------------------------------- the per-op rows
def per_op_payload(rows: Sequence[PerOpRow]) -> bytes:
    """The per-op rows as a record's file holds them: one JSON object a line."""
    return "\n".join(r.model_dump_json() for r in rows).encode()


def per_op_digest(rows: Sequence[PerOpRow]) -> str:
    """sha256 of ``per_op_payload``: equal for equal rows, whether read from a record or just computed."""
    return _payload_digest(per_op_payload(rows))


def _payload_digest(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def per_op_file(home: Path, workload_key: str) -> Path:
    """The file beside a record holding its per-op rows."""
    return cache_store.call_record_entry(home, workload_key).with_suffix(".per_op.jsonl")


def read_per_op(path: str | Path) -> list[PerOpRow] | None:
    """The per-op rows of a record's file; None when it is gone or fails its digest."""
    def decode(data: bytes) -> list[PerOpRow]:
        return [PerOpRow.model_validate_json(line) for line in data.splitlines() if line.strip()]

    return cache_store.load(Path(path), decode, discard_level=logging.DEBUG)


# ---------------------------------------------------------------------------- reading and writing
def load_record(home: Path, workload_key: str) -> CallRecord | None:
    """The stored record of a workload partition; a corrupt one is a miss (logged at debug)."""
    return cache_store.load(cache_store.call_record_entry(home, workload_key), CallRecord.model_validate_json,
                            discard_level=logging.DEBUG)


def _unchanged(home: Path, recorded: RecordedPartition) -> bool:
    try:
        stat = os.stat(home / recorded.storage)
    except OSError:
        return False
    return stat.st_size == recorded.size and stat.st_mtime_ns == recorded.mtime_ns


@dataclass(frozen=True)
class Hit:
    """A file's record that still holds for its workload assets: ``stale`` names the parts asked
    for whose bound assets must be computed again (a spec edited since, a part the record has not
    seen, a stored bound value changed on disk); none: the whole file is answered by the record."""

    record: CallRecord
    stale: tuple[str, ...] = ()

    @property
    def kept(self) -> list[RecordedPartition]:
        """The recorded partitions that stand: the workload assets and the fresh parts' bounds."""
        return [p for p in self.record.partitions if p.hardware is None or p.hardware not in self.stale]


def find_hits(home: Path, keys: Mapping[str, str], freshness: Mapping[str, str | None],
              specs: Mapping[str, str], required: Sequence[str] = ()) -> dict[str, Hit]:
    """``path -> Hit`` of each file (``keys``: path -> workload partition key) whose record's
    freshness key equals ``freshness[path]``, that recorded every workload asset in ``required``
    (the on-demand ones the call asks for: ``--ski-slope`` after a call without it is a miss), and
    whose recorded workload partitions' storage files all exist with the recorded size and mtime;
    ``specs`` (``spec_versions`` of the parts asked) decides each part's staleness. No Dagster:
    the CLI decides this before importing it."""
    hits = {}
    for path, key in keys.items():
        wanted = freshness.get(path)
        record = load_record(home, key) if wanted is not None else None
        if record is None or record.freshness_key != wanted or record.workload_key != key:
            continue
        if not set(required) <= {p.asset for p in record.partitions}:
            log.debug("%s: the record has no %s: computed again", path, ", ".join(required))
            continue
        if not per_op_file(home, key).is_file():
            log.debug("%s: the record's per-op rows are gone: computed again", path)
            continue
        changed = [p for p in record.partitions if not _unchanged(home, p)]
        if any(p.hardware is None for p in changed):
            p = next(p for p in changed if p.hardware is None)
            log.debug("%s: recorded %s[%s] changed on disk: computed again", path, p.asset, p.partition)
            continue
        bounded = {p.hardware for p in record.partitions if p.hardware is not None}
        stale = tuple(name for name, digest in specs.items()
                      if record.hardware.get(name) != digest or name not in bounded
                      or any(p.hardware == name for p in changed))
        hits[path] = Hit(record, stale)
    return hits


def save_record(home: Path, path: str, workload_key: str, freshness: str, workload: str,
                events: Sequence[PartitionEvent], per_op: Sequence[PerOpRow], specs: Mapping[str, str],
                storage_ids: Mapping[tuple[str, str], int], activity: Sequence[str] = (),
                base: Hit | None = None) -> bool:
    """Store the record of a file whose every event of the call succeeded (``events``: its
    workload and bound assets' events, as recorded by the call's run; ``specs``: the digests of
    the parts they were computed on; ``storage_ids``: ``(asset, partition) -> storage id`` of the
    latest materialisations, ``step_events.latest_storage_ids``; ``per_op``: every per-op row of
    the file). ``base``: the hit whose stale parts only were computed, its other partitions and
    parts kept. False (nothing stored) when an event failed, a materialisation is not found or a
    stored value is missing."""
    from solar_assets.asset_compute.storage import storage_path

    partitions = list(base.kept) if base is not None else []
    for event in events:
        if event.error is not None or event.observation or event.data_version is None:
            return False
        file = storage_path(home, event.partition)
        storage_id = storage_ids.get((event.partition.asset, str(event.partition.key)))
        try:
            stat = file.stat()
        except OSError:
            return False
        if storage_id is None:
            return False
        partitions.append(RecordedPartition(asset=event.partition.asset, partition=str(event.partition.key),
                                            data_version=event.data_version, storage_id=storage_id,
                                            storage=str(file.relative_to(home)), size=stat.st_size,
                                            mtime_ns=stat.st_mtime_ns,
                                            hardware=dict(event.partition.dims).get("hardware")))
    if not partitions:
        return False
    hardware = dict(specs)
    if base is not None:
        hardware = {**{k: v for k, v in base.record.hardware.items() if k not in base.stale}, **hardware}
        activity = list(dict.fromkeys([*base.record.activity, *activity]))
    payload = per_op_payload(per_op)
    if not cache_store.store(per_op_file(home, workload_key), payload):
        return False
    record = CallRecord(freshness_key=freshness, workload_key=workload_key, workload=workload, path=path,
                        partitions=partitions, per_op_digest=_payload_digest(payload), hardware=hardware,
                        activity=list(activity))
    return cache_store.store(cache_store.call_record_entry(home, workload_key), record.model_dump_json())


# ---------------------------------------------------------------------------- against the instance
def verify(instance: dg.DagsterInstance, hits: Mapping[str, Hit]) -> set[str]:
    """The paths of ``hits`` whose record the instance contradicts: a kept asset partition
    (``Hit.kept``) whose latest materialisation is missing or is not the recorded one (another
    storage id). One query per asset (``step_events.latest_storage_ids``), whatever the number of
    partitions, and no event read back."""
    from solar_assets.dagster_defs.step_events import latest_storage_ids

    latest = latest_storage_ids(instance, {(p.asset, p.partition) for hit in hits.values() for p in hit.kept})
    failed = set()
    for path, hit in hits.items():
        for p in hit.kept:
            found = latest.get((p.asset, p.partition))
            if found != p.storage_id:
                log.debug("%s: %s[%s]'s latest materialisation is %s in the instance, recorded %s: computed again",
                          path, p.asset, p.partition, found if found is not None else "none", p.storage_id)
                failed.add(path)
                break
    return failed


def record_partitions(events: Sequence[PartitionEvent]) -> set[tuple[str, str]]:
    """``(asset, partition key)`` of the materialised ``events``: what ``save_record`` asks the
    storage ids of."""
    return {(e.partition.asset, str(e.partition.key)) for e in events
            if e.error is None and not e.observation and e.data_version is not None}


# ---------------------------------------------------------------------------- the report's record
REPORT_RECORD = "headroom_report.json"
"""The report's record in ``$SOLAR_HOME/call_records`` (no workload key ends in ``.json`` alone:
theirs carry a hash, ``cache_store.call_record_entry``)."""


class RecordedCheck(BaseModel):
    """What one of the report's asset checks said, as the CLI prints it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check_name: str
    passed: bool
    description: str | None = None


class ReportRecord(BaseModel):
    """The report run a call made: its materialisation (storage id), its stored value's file, the
    inputs a call gives it (failures, target latency) and what its checks said. A next call that
    records nothing and whose report would take the same inputs reads the report from here and
    the stored value instead of running it again (``runner``: ``call.report_is_current``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = RECORD_FORMAT
    storage_id: int
    storage: str  # relative to $SOLAR_HOME
    size: int
    mtime_ns: int
    failures: list[str]
    target_latency_s: float | None
    environment: str  # cache_store.environment_key(): solar's code, libraries, settings
    checks: list[RecordedCheck]


def save_report_record(home: Path, storage_id: int, failures: Sequence[str], target_latency_s: float | None,
                       checks: Sequence[object]) -> bool:
    """Record the report run just made (``checks``: its ``AssetCheckEvaluation``s); False when its
    stored value is missing."""
    from solar_assets.asset_compute.keys import Partition
    from solar_assets.asset_compute.storage import storage_path

    file = storage_path(home, Partition("headroom_report", None))
    try:
        stat = file.stat()
    except OSError:
        return False
    record = ReportRecord(storage_id=storage_id, storage=str(file.relative_to(home)), size=stat.st_size,
                          mtime_ns=stat.st_mtime_ns, failures=list(failures), target_latency_s=target_latency_s,
                          environment=cache_store.environment_key(),
                          checks=[RecordedCheck(check_name=c.check_name, passed=c.passed,  # type: ignore[attr-defined]
                                                description=c.description) for c in checks])  # type: ignore[attr-defined]
    return cache_store.store(Path(home) / cache_store.CALL_RECORDS / REPORT_RECORD, record.model_dump_json())


def load_report_record(home: Path, failures: Sequence[str], target_latency_s: float | None) -> ReportRecord | None:
    """The report's record when it was made with these inputs and its stored value is unchanged
    on disk; None otherwise (then the report runs)."""
    record = cache_store.load(Path(home) / cache_store.CALL_RECORDS / REPORT_RECORD, ReportRecord.model_validate_json,
                              discard_level=logging.DEBUG)
    if record is None or record.format != RECORD_FORMAT or record.failures != list(failures) \
            or record.target_latency_s != target_latency_s or record.environment != cache_store.environment_key():
        return None
    try:
        stat = os.stat(Path(home) / record.storage)
    except OSError:
        return None
    return record if (stat.st_size, stat.st_mtime_ns) == (record.size, record.mtime_ns) else None
