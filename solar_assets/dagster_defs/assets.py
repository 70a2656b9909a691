"""The assets: the Dagster wiring over ``solar_assets.asset_compute``, where each asset's function
lives as plain code over plain data, declared once (``asset_compute.graph``): the stage assets are
made from those declarations here (``asset_of``); ``measured_runtime`` and ``headroom_report``,
which no other path composes, are written out below.

Every asset returns ``dg.Output`` with a content-hash data version (so staleness follows the
data, not the clock), a ``code_version`` (the stage's ``CODE_VERSION``, or the hash of its
sources where it declares none: ``asset_compute.graph``), and metadata a person reads in the UI.
A user-facing stage error becomes a ``dg.Failure`` whose description is the one-line message
naming the file; the validation failure also carries the per-output error table.
"""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

import contextlib
import dataclasses
import hashlib
import inspect
import json
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg

from ir_schemas import ReportRow
from solar_assets.asset_compute import workload as workload_fns
from solar_assets.asset_compute.code_versions import code_version
from solar_assets.asset_compute.computed import Computed
from solar_assets.asset_compute.graph import BOUND_NODES, HARDWARE_NODE, NODES, WORKLOAD_NODES, AssetNode
from solar_assets.asset_compute.storage import stored_form
from solar_assets.dagster_defs import metadata as md
from solar_assets.dagster_defs.conditions import REANALYSE, REPORT
from solar_assets.dagster_defs.partitions import (
    BACKEND_KEYS,
    hardware_partitions,
    workload_on_backend,
    workload_on_hardware,
    workload_partitions,
)
from solar_assets.dagster_defs.report_inputs import STORED_PARTITIONS
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.sources import hardware_file, workload_file
from solar_assets.errors import SolarError, one_line
from solar_assets.bounds import InverseRoofline
from solar_assets.bounds.cache_aware import CacheAwareOutcome
from solar_assets.dagster_defs.artifact_types import ByPartition, T, by_partition_type
from solar_assets.hardware import HardwareSpec
from solar_assets.chain.artifacts import BoundsRow
from solar_assets.validate.errors import ValidationFailed
from solar_assets.workloads import WorkloadSource

if TYPE_CHECKING:  # imported where used: loading the definitions stays light
    from solar_assets.measure.workload import WorkloadMeasurement

IR_TEXT_MAX_LINES = md.CODE_MAX_LINES
PNG_EMBED_MAX_BYTES = md.PNG_EMBED_MAX_BYTES  # larger pictures are linked by path, not embedded in the event log


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _user_errors() -> Iterator[None]:
    """A SolarError fails the step with its message on one line (it already names the file);
    a failed validation also carries its per-output table."""
    try:
        yield
    except ValidationFailed as e:
        raise dg.Failure(description=one_line(str(e)),
                         metadata=md.to_dagster(workload_fns.validation_metadata(e.result)),
                         allow_retries=False) from e
    except SolarError as e:
        raise dg.Failure(description=one_line(str(e)), allow_retries=False) from e


def stored(out: Computed) -> Computed:
    """``out`` with its value as the IO manager keeps it (``asset_compute.storage.stored_form``)."""
    return dataclasses.replace(out, value=stored_form(out.value))


def _output(compute: Callable[[], Computed]) -> dg.Output:
    """The ``dg.Output`` of one asset function's result (its errors as ``_user_errors`` says)."""
    with _user_errors():
        out = compute()
    return _quiet_output(out.value, out.data_version, md.to_dagster(out.metadata))


def _quiet_output(value: object, data_version: str, metadata: dict[str, object]) -> dg.Output:
    with warnings.catch_warnings():  # data_version on Output is beta in Dagster 1.13 (pinned)
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.Output(value, data_version=dg.DataVersion(data_version), metadata=metadata)


# ---------------------------------------------------------------------------- from the one declaration
_PARTITIONS = {"workload": workload_partitions, "hardware": hardware_partitions, "pair": workload_on_hardware}
_SOURCES = {"workload_file": workload_file, "hardware_file": hardware_file}


def asset_of(node: AssetNode) -> dg.AssetsDefinition:
    """The Dagster asset of one declared node (``asset_compute.graph``): its inputs are the node's,
    its partitions, code version, group and kinds the node's; its step calls the node's function
    on the step's partition (``context.partition_key`` for a node over a source file), stores what
    ``stored_form`` keeps and returns a content-hash data version. A pair's inputs from a workload
    or a hardware asset are read at the pair's own dimension (Dagster's multi-to-single mapping).
    A node that runs workload code runs in a worker with the time and memory limits
    (``asset_compute.isolated``)."""

    @dg.asset(name=node.name, ins={name: dg.AssetIn(name) for name in node.inputs},
              deps=[_SOURCES[s] for s in node.sources], partitions_def=_PARTITIONS[node.partitioning],
              code_version=node.code_version, group_name=node.group, kinds=set(node.kinds),
              description=inspect.cleandoc(node.fn.__doc__ or node.name), automation_condition=REANALYSE)
    def compute(context: dg.AssetExecutionContext, solar: SolarConfig, **inputs: Any) -> dg.Output:
        if node.runs_workload_code:  # the user's file runs in a worker with limits, whatever the executor
            from solar_assets.asset_compute.isolated import in_worker

            return _output(lambda: in_worker(node, inputs, solar.settings, context.partition_key))
        key = {"key": context.partition_key} if node.takes_key else {}
        return _output(lambda: stored(node.fn(**key, **inputs, solar=solar.settings)))

    return compute


_BY_NAME = {name: asset_of(node) for name, node in NODES.items()}
workload_source, ir_translation, golden_outputs, ir_validation, einsum_graph, ski_slope = (
    _BY_NAME[n.name] for n in WORKLOAD_NODES)
hardware_spec = _BY_NAME[HARDWARE_NODE.name]
cache_aware_bound, sol_bounds, inverse_roofline = (_BY_NAME[n.name] for n in BOUND_NODES)


# ---------------------------------------------------------------------------- per workload × backend (this host)
HOST_SPEC = "host"  # the hardware partition a measurement is compared with: the machine it ran on


@dataclasses.dataclass
class MeasuredRuntime:
    """One backend's measurement of one workload, and the digest of the host spec it ran against."""

    measurement: "WorkloadMeasurement"  # one backend
    host_digest: str


class MeasureConfig(dg.Config):
    """The timing loop of ``measured_runtime`` (``solar analyze --runs``)."""

    runs: int = 20
    min_runs: int = 5


with warnings.catch_warnings():  # beta in Dagster 1.13, and the one mapping that says this
    warnings.simplefilter("ignore", dg.BetaWarning)
    _WORKLOAD_OF_MEASUREMENT = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="workload")


@dg.asset(partitions_def=workload_on_backend,
          ins={"workload_source": dg.AssetIn(partition_mapping=_WORKLOAD_OF_MEASUREMENT),
               "hardware_spec": dg.AssetIn(partition_mapping=dg.SpecificPartitionsPartitionMapping([HOST_SPEC]),
                                           dagster_type=by_partition_type(HardwareSpec))},
          code_version=code_version("solar_assets.measure"), group_name="measure", kinds={"pytorch", "jax"})
def measured_runtime(context: dg.AssetExecutionContext, config: MeasureConfig, workload_source: WorkloadSource,
                     hardware_spec: ByPartition[HardwareSpec], solar: SolarConfig) -> dg.Output:
    """The workload run on this host by one backend (caches flushed before each run): every timed
    run, the first call, the host spec it ran against. Headroom and the violation audit are
    computed from it in ``headroom_report`` and judged by its ``no_sol_violation`` check.
    Never cached: each materialisation is a new measurement, so its data version is the times."""
    from solar_assets.measure import MeasureOptions, TimingOptions, measure_workload

    keys = context.partition_key.keys_by_dimension
    framework, backend = BACKEND_KEYS[keys["backend"]]
    host = hardware_spec if not isinstance(hardware_spec, dict) else next(iter(hardware_spec.values()))
    if workload_source.framework != framework:
        raise dg.Failure(description=f"{workload_source.path}: a {workload_source.framework} workload has no "
                                     f"{keys['backend']} measurement", allow_retries=False)
    runs = max(config.runs, 1)
    options = MeasureOptions(backends=(backend,), timing=TimingOptions(runs=runs, min_runs=min(config.min_runs, runs)),
                             train=workload_source.train)  # a training step's partition times the step
    from solar_assets.asset_compute.isolated import call_in_worker

    with _user_errors():  # the timing runs execute the user's file: in a worker with the limits
        measurement = call_in_worker(str(workload_source.path), measure_workload,
                                     {"path": workload_source.path, "options": options}, solar.settings)
    timing = measurement.timings.get(backend)
    if timing is None or not timing.ok:
        raise dg.Failure(description=one_line(
            (timing.error if timing is not None else None) or f"{workload_source.path}: {backend}: no runs"),
            allow_retries=False)
    version = _digest(json.dumps(list(timing.times_s)), host.digest())
    return _quiet_output(MeasuredRuntime(measurement, host.digest()), version, md.to_dagster({
        "backend": timing.label,
        "median": md.seconds(timing.median_s),
        "fastest": md.seconds(timing.min_s),
        **md.plotted_times({"median": timing.median_s, "fastest": timing.min_s}),
        "runs": len(timing.times_s),
        "first call": md.seconds(timing.first_call_s),
        "threads": timing.extra.get("threads", ""),
        "host spec digest": host.digest(),
        "notes": "; ".join(measurement.notes) or "none",
    }))


@dg.asset(partitions_def=workload_on_backend,
          ins={"workload_source": dg.AssetIn(partition_mapping=_WORKLOAD_OF_MEASUREMENT),
               "einsum_graph": dg.AssetIn(partition_mapping=_WORKLOAD_OF_MEASUREMENT),
               "hardware_spec": dg.AssetIn(partition_mapping=dg.SpecificPartitionsPartitionMapping([HOST_SPEC]),
                                           dagster_type=by_partition_type(HardwareSpec))},
          code_version=code_version("solar_assets.measure", "solar_assets.report.per_op", "solar_assets.bounds"),
          group_name="measure", kinds={"pytorch", "jax"})
def measured_per_op(context: dg.AssetExecutionContext, workload_source: WorkloadSource, einsum_graph: Any,
                    hardware_spec: ByPartition[HardwareSpec], solar: SolarConfig) -> dg.Output:
    """Each call of the workload's eager run on this host, profiled (``measure.op_measure``) and
    joined with its per-op SOL on the host spec (``measure.op_join``): measured median, headroom,
    recoverable time, and the audit against each call's floor. Only the eager backends have
    partitions that run: a compiled run fuses the ops. Never cached: a measurement belongs to the
    moment, so its data version is the joined times."""
    from solar_assets.asset_compute.isolated import call_in_worker
    from solar_assets.chain import stages
    from solar_assets.measure.backends import LABELS
    from solar_assets.measure.op_join import ir_calls, join_profile
    from solar_assets.measure.op_measure import profile_workload
    from solar_assets.report.per_op import per_op_rows

    keys = context.partition_key.keys_by_dimension
    framework, backend = BACKEND_KEYS[keys["backend"]]
    host = hardware_spec if not isinstance(hardware_spec, dict) else next(iter(hardware_spec.values()))
    if workload_source.framework != framework or backend != "eager":
        raise dg.Failure(description=f"{workload_source.path}: per-op measurement runs a {workload_source.framework} "
                                     f"workload's eager backend, not {keys['backend']}", allow_retries=False)
    with _user_errors():
        bounds = stages.bound_graph(workload_source, einsum_graph, host, solar.run_config)
        rows = per_op_rows(workload_source.name, einsum_graph, bounds, HOST_SPEC)
        profile = call_in_worker(str(workload_source.path), profile_workload,
                                 {"path": workload_source.path, "backend": backend}, solar.settings)
    joined = join_profile(workload_source.name, HOST_SPEC, LABELS[(framework, backend)], ir_calls(einsum_graph, rows),
                          profile, int(host.onchip_buffer_bytes), float(host.dram_bytes_per_s))
    version = _digest(json.dumps([r.model_dump(mode="json") for r in joined.rows], sort_keys=True), host.digest())
    from solar_assets.asset_compute.metadata import PER_OP_UI_MAX_ROWS
    from solar_assets.report.measured_ops import format_measured_ops

    return _quiet_output(joined, version, md.to_dagster({
        "calls joined": len(joined.rows),
        "violations": len(joined.violations),
        "iterations": joined.iterations,
        "per-op headroom": dg.MetadataValue.md(format_measured_ops([joined], top=PER_OP_UI_MAX_ROWS, markdown=True)),
        "in the profile, not the IR": len(joined.profile_only),
        "not attributed": len(joined.not_attributed),
        "host spec digest": host.digest(),
    }))


# ---------------------------------------------------------------------------- across everything
class HeadroomConfig(dg.Config):
    """Which rows the report shows; None (the default): every materialised workload × hardware."""

    workloads: list[str] | None = None
    hardware: list[str] | None = None
    failures: list[str] = []
    """One-line errors of workloads that failed, listed in the report (the CLI passes them)."""


@dg.asset(
    ins={
        "sol_bounds": dg.AssetIn(input_manager_key=STORED_PARTITIONS,
                                 dagster_type=by_partition_type(BoundsRow)),
        "inverse_roofline": dg.AssetIn(input_manager_key=STORED_PARTITIONS,
                                       dagster_type=by_partition_type(InverseRoofline, optional=True)),
        "cache_aware_bound": dg.AssetIn(input_manager_key=STORED_PARTITIONS,
                                        dagster_type=by_partition_type(CacheAwareOutcome)),
        "measured_runtime": dg.AssetIn(input_manager_key=STORED_PARTITIONS,
                                       dagster_type=by_partition_type(MeasuredRuntime)),
    },
    code_version=code_version("solar_assets.report", "solar_assets.measure"), group_name="report",
    kinds={"pandas"}, automation_condition=REPORT,
)
def headroom_report(context: dg.AssetExecutionContext, config: HeadroomConfig, sol_bounds: ByPartition[BoundsRow],
                    inverse_roofline: ByPartition[InverseRoofline | None],
                    cache_aware_bound: ByPartition[CacheAwareOutcome], measured_runtime: ByPartition[MeasuredRuntime],
                    solar: SolarConfig) -> dg.Output:
    """One table across workloads and hardware: the latest row of every materialised
    ``sol_bounds`` partition (``config`` may narrow it), with the inverse roofline, the cache-aware
    bracket and, on ``host``, the measured runtimes with headroom and the violation audit. Written
    as CSV / JSON / Markdown / roofline PNG under ``$SOLAR_HOME/reports``, with
    ``report_provenance.json``: the run and data version each row came from."""
    from solar_assets.report import complete_row, format_table, write_report

    # Dagster's filesystem IO manager hands over a dict by partition key, but the bare value when
    # exactly one workload × hardware partition exists, and None when none does.
    sol_bounds, inverse_roofline, cache_aware_bound, measured_runtime = (
        _by_partition(v) for v in (sol_bounds, inverse_roofline, cache_aware_bound, measured_runtime))
    order_w = {w: i for i, w in enumerate(config.workloads or [])}
    order_h = {h: i for i, h in enumerate(config.hardware or [])}
    measured = _measurements_by_workload(measured_runtime)
    rows: list[ReportRow] = []
    keyed: dict[int, tuple[str, str]] = {}
    for key, bounds_row in sol_bounds.items():
        row = bounds_row.row
        workload = _workload_of(key, row, config.workloads)
        if (config.workloads is not None and workload not in order_w) or \
                (config.hardware is not None and row.hardware not in order_h):
            continue
        inverse = inverse_roofline.get(key)
        if inverse is None or solar.target_latency_s is None or \
                float(inverse.target_latency_s) != float(solar.target_latency_s):
            inverse = None  # none, or one of an older target
        outcome = cache_aware_bound.get(key)
        if outcome is not None and outcome.capacity_bytes != row.onchip_buffer_bytes:
            outcome = None  # one of an old spec
        row = complete_row(row, inverse=inverse, target_latency_s=solar.target_latency_s, cache_aware=outcome)
        if row.hardware == HOST_SPEC and workload in measured:
            row = _with_measurement(row, measured[workload])
        rows.append(row)
        keyed[id(row)] = (workload, key)
    rows.sort(key=lambda r: (order_w.get(keyed[id(r)][0], len(order_w)), keyed[id(r)][0],
                             order_h.get(r.hardware, len(order_h)), r.hardware))
    provenance = _provenance(context.instance, [keyed[id(r)][1] for r in rows], rows)
    paths = write_report(rows, solar.reports_dir, errors=config.failures)
    provenance_file = Path(solar.reports_dir) / "report_provenance.json"
    provenance_file.write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    failed_validation = sorted({Path(f.split(": ", 1)[0]).stem for f in config.failures if "failed validation" in f})
    payload = json.dumps([r.model_dump(mode="json") for r in rows], sort_keys=True)
    table = ["| workload | hardware | sol_bounds run | data version |", "|---|---|---|---|",
             *(f"| {p['workload']} | {p['hardware']} | {p['run_id'][:8]} | {p['data_version']} |" for p in provenance)]
    return _quiet_output(rows, _digest(payload, *config.failures), md.to_dagster({
        "rows": len(rows),
        "failed": len(config.failures),
        "violations": sum(1 for r in rows if r.violation),
        "failed validation": dg.MetadataValue.json(failed_validation),
        "report": dg.MetadataValue.md(format_table(rows, markdown=True) if rows else "no rows"),
        "provenance": dg.MetadataValue.md("\n".join(table)),
        "roofline": md.picture(paths["roofline"], "roofline"),
        **{f"{kind} file": dg.MetadataValue.path(str(p)) for kind, p in paths.items()},
        "provenance file": dg.MetadataValue.path(str(provenance_file)),
    }))


def _measurements_by_workload(measured_runtime: dict[str, MeasuredRuntime]) -> dict[str, list[MeasuredRuntime]]:
    """``measured_runtime`` partitions (``backend|workload``) grouped by workload key."""
    out: dict[str, list[MeasuredRuntime]] = {}
    for key, value in measured_runtime.items():
        workload = key.split("|", 1)[1] if "|" in key else value.measurement.workload
        out.setdefault(workload, []).append(value)
    return out


def _with_measurement(row: ReportRow, values: list[MeasuredRuntime]) -> ReportRow:
    """The host row with every backend's latest measurement (the framework's native backend
    first: it is the report's default), headroom and the violation audit (``measure.audit``:
    judged against the provable bounds only)."""
    from solar_assets.measure import add_measurement
    from solar_assets.measure.backends import NATIVE
    from solar_assets.measure.workload import WorkloadMeasurement

    first = values[0].measurement
    native = NATIVE.get(first.framework, "eager")
    timings = sorted((t for v in values for t in v.measurement.timings.values()),
                     key=lambda t: (t.backend != native, t.backend))
    merged = WorkloadMeasurement(row.workload, first.path, first.framework,
                                 timings={t.backend: t for t in timings},
                                 notes=[n for v in values for n in v.measurement.notes])
    return add_measurement(row, merged, HOST_SPEC)


def _provenance(instance: dg.DagsterInstance, keys: list[str], rows: list[ReportRow]) -> list[dict[str, str]]:
    """For each row, the run and data version of its latest ``sol_bounds`` materialisation (one
    query for the storage ids, one for their records)."""
    wanted = {k for k in keys if "|" in k}
    latest = instance.get_latest_storage_id_by_partition(sol_bounds.key, dg.DagsterEventType.ASSET_MATERIALIZATION,
                                                         wanted or None)
    by_id = {}
    if latest:
        records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=sol_bounds.key,
                                                                        storage_ids=list(latest.values())),
                                                  limit=len(latest)).records
        by_id = {r.storage_id: r for r in records}
    out = []
    for key, row in zip(keys, rows):
        record = by_id.get(latest.get(key, -1))
        tags = record.asset_materialization.tags if record and record.asset_materialization else {}
        out.append({"workload": row.workload, "hardware": row.hardware, "partition": key,
                    "run_id": record.run_id if record else "", "data_version": (tags or {}).get(
                        "dagster/data_version", "")})
    return out


def _workload_of(key: str, row: ReportRow, wanted: list[str] | None) -> str:
    """The workload partition key of a ``sol_bounds`` partition (``hardware|workload``: Dagster
    joins the dimensions in name order, and keys escape ``|``). The only partition of a one-partition
    definition has no key: then the row's own name, or the one workload asked for."""
    if "|" in key:
        return key.split("|", 1)[1]
    return wanted[0] if wanted and len(wanted) == 1 else row.workload


def _by_partition(value: ByPartition[T]) -> dict[str, T]:
    """A multi-partition input as ``{partition key: value}`` (see ``headroom_report``)."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else {"(the only partition)": value}


WORKLOAD_ASSETS = tuple(_BY_NAME[n.name] for n in WORKLOAD_NODES)
BOUND_ASSETS = tuple(_BY_NAME[n.name] for n in BOUND_NODES)
ASSETS = (*WORKLOAD_ASSETS, hardware_spec, *BOUND_ASSETS, measured_runtime, measured_per_op, headroom_report)
