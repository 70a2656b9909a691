"""The per-hardware and per-pair assets as plain functions: a hardware spec, and for a workload on
it the cache-aware bracket, the SOL bounds with the pair's report row, and the inverse roofline."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ir_schemas import ReportRow
from solar_assets.asset_compute import metadata as md
from solar_assets.asset_compute.code_versions import code_version
from solar_assets.asset_compute.computed import Computed, digest
from solar_assets.asset_compute.metadata import Markdown, Metadata, Text
from solar_assets.asset_compute.settings import AssetSettings
from solar_assets.asset_compute.workload import mark_drawn, unchanged
from solar_assets.bounds import Bound, InverseRoofline, SolBounds
from solar_assets.bounds.cache_aware import CacheAwareOutcome
from solar_assets.chain import stages
from solar_assets.chain.artifacts import BoundsRow
from solar_assets.graph import EinsumGraph
from solar_assets.hardware import HardwareSpec
from solar_assets.paths import file_stem
from solar_assets.stage_clock import clocked
from solar_assets.validate.validated import ValidatedIR
from solar_assets.workloads import WorkloadSource

if TYPE_CHECKING:
    from solar_assets.report.per_op import PerOpRow

CODE_VERSIONS = {
    "hardware_spec": ("solar_assets.hardware",),
    "sol_bounds": ("solar_assets.bounds", "solar_assets.report"),
    "cache_aware_bound": ("solar_assets.bounds.cache_aware", "solar_assets.graph"),
    "inverse_roofline": ("solar_assets.bounds",),
}


def hardware_spec(key: str, solar: AssetSettings) -> Computed[HardwareSpec]:
    """One accelerator's validated spec; its data version is the hash of its figures, so editing a
    figure makes exactly that hardware's bounds stale."""
    spec = stages.load_spec(key, solar.hardware_dir)
    return Computed(spec, spec.digest(), {
        "vendor": spec.vendor,
        "peak FLOP/s": md.peaks(spec.peak_flop_per_s.items()),
        "DRAM bytes/s": md.byte_rate(float(spec.dram_bytes_per_s)),
        "on-chip buffer bytes": md.data_size(int(spec.onchip_buffer_bytes)),
        "sources": Markdown("\n".join(f"- {s}" for s in spec.sources)),
    })


def _bound_md(bound: Bound) -> str:
    from solar_assets.report import format_bytes, format_count, format_seconds

    proven = "" if getattr(bound, "proven_optimal", True) else " (not proven optimal)"
    return (f"| {bound.mode} | {format_seconds(bound.time_s)} | {bound.limiter} | {format_count(bound.flops)} "
            f"| {format_bytes(bound.bytes)} | {bound.intensity_flop_per_byte:.3g}{proven} |")


def sol_bounds(workload_source: WorkloadSource, ir_validation: ValidatedIR, einsum_graph: EinsumGraph,
               hardware_spec: HardwareSpec, cache_aware_bound: CacheAwareOutcome | None, solar: AssetSettings,
               draw: bool = True) -> Computed[BoundsRow]:
    """Unfused, fused and cache-aware SOL bounds of the workload on the hardware, each naming its
    limiter, with this pair's roofline plot unless ``draw`` is False (a worker of ``solar analyze``
    leaves it to the CLI: ``roofline_picture``). ``cache_aware_bound`` None (the plain chain
    without the bracket): the row's cache-aware columns stay empty."""
    from solar_assets.report import assemble_row
    from solar_assets.report.table import work_dtypes

    bounds = stages.bound_graph(workload_source, einsum_graph, hardware_spec, solar.run_config)
    row = assemble_row(workload_source, ir_validation, einsum_graph, bounds, hardware_spec,
                       cache_aware=cache_aware_bound)
    table = "\n".join(["| mode | time | limiter | FLOPs | DRAM bytes | FLOP/byte |", "|---|---:|---|---:|---:|---:|",
                       *(_bound_md(b) for b in (bounds.unfused, bounds.unfused_graph, bounds.fused)),
                       _cache_aware_md(row)])
    per_op = per_op_or_why(row.workload, einsum_graph, bounds, row.hardware)
    metadata: Metadata = {
        "SOL unfused": md.sol(row.sol_unfused_s, row.bound_unfused),
        "SOL fused": md.sol(row.sol_fused_s, row.bound_fused),
        "SOL cache-aware lower bound": md.sol(row.sol_cache_aware_lb_s, row.bound_cache_aware_lb),
        "cache-aware, best modelled schedule": md.sol(row.sol_cache_aware_s, row.bound_cache_aware),
        **md.plotted_times({"SOL unfused": row.sol_unfused_s, "SOL fused": row.sol_fused_s,
                            "SOL cache-aware lower bound": row.sol_cache_aware_lb_s}),
        "bound_unfused": row.bound_unfused,
        "bound_fused": row.bound_fused,
        "dtype": row.dtype,
        "precision": Text(work_dtypes(row)),
        "effective peak (FLOPs / busiest unit's time)": md.flop_rate(row.peak_flop_per_s),
        "unit peaks (busiest first)": Text(row.peaks_fused or "-"),
        "DRAM bytes/s": md.byte_rate(row.dram_bytes_per_s),
        "bound_cache_aware": row.bound_cache_aware or "none",
        "cache-aware note": row.cache_aware_note or "none",
        "bounds": Markdown(table),
        **_per_op_metadata(per_op),
    }
    if draw:
        metadata.update(roofline_picture(row, per_op, solar))
    return Computed(BoundsRow(bounds=bounds, row=row), digest(row.model_dump_json()), metadata)


@clocked("pictures")
def roofline_picture(row: ReportRow, per_op: "list[PerOpRow] | str", solar: AssetSettings) -> Metadata:
    """``{"roofline": the pair's roofline}`` with its ops, drawn under the reports dir unless drawn
    from the same row before; when it cannot be drawn, the entry says why."""
    from solar_assets.report import plot_roofline

    roofline = Path(solar.reports_dir) / "roofline" / f"{file_stem(row.workload)}@{row.hardware}.png"
    try:
        row_digest = digest(row.model_dump_json(), code_version("solar_assets.report"))
        if not unchanged(roofline, row_digest):
            plot_roofline([row], roofline, per_op=per_op if isinstance(per_op, list) else ())
            mark_drawn(roofline, row_digest)
        return {"roofline": md.picture(roofline, f"roofline of {row.workload} on {row.hardware}")}
    except Exception as e:  # a picture is a nicety: record why it is missing, keep the bounds
        return {"roofline": Text(f"no picture: {type(e).__name__}: {e}")}


def per_op_or_why(workload: str, graph: EinsumGraph, bounds: SolBounds, hardware: str) -> "list[PerOpRow] | str":
    """The per-op rows (``report.per_op``), or why there are none: a graph whose breakdown cannot
    be made keeps its bounds (the breakdown is a view of them)."""
    from solar_assets.report.per_op import per_op_rows

    try:
        return per_op_rows(workload, graph, bounds, hardware)
    except Exception as e:  # record why it is missing, keep the bounds
        return f"no per-op breakdown: {type(e).__name__}: {e}"


def _per_op_metadata(rows: "list[PerOpRow] | str") -> Metadata:
    """The per-op breakdown on the bounds asset: a table in the UI (its largest shares) and the count."""
    if isinstance(rows, str):
        return {"per-op": Text(rows)}
    shown = min(len(rows), md.PER_OP_UI_MAX_ROWS)
    return {"per-op": md.per_op_table(rows), "by module": md.per_module_table(rows),
            "ops": Text(f"{len(rows)} framework ops" + (
                f", the {shown} largest shares shown (every op: solar analyze --per-op all)" if shown < len(rows)
                else ""))}


def _cache_aware_md(row: ReportRow) -> str:
    """The cache-aware line of the bounds table (from the row: the outcome carries bytes, not time)."""
    from solar_assets.report import format_bytes, format_count, format_seconds

    if row.sol_cache_aware_s is None or row.bytes_cache_aware is None:
        return f"| cache_aware | — | — | — | — | {row.cache_aware_note or 'no bound'} |"
    intensity = row.flops / row.bytes_cache_aware if row.bytes_cache_aware else float("inf")
    proven = "" if row.cache_aware_proven_optimal else " (not proven optimal)"
    return (f"| cache_aware | {format_seconds(row.sol_cache_aware_s)} | {row.bound_cache_aware} "
            f"| {format_count(row.flops)} | {format_bytes(row.bytes_cache_aware)} | {intensity:.3g}{proven} |")


def cache_aware_bound(workload_source: WorkloadSource, einsum_graph: EinsumGraph, hardware_spec: HardwareSpec,
                      solar: AssetSettings) -> Computed[CacheAwareOutcome]:
    """Minimum DRAM traffic over tilings and fused segments with the hardware's on-chip buffer
    (Pyomo + GLPK ILP). A solver failure is recorded, not raised: the other modes stand."""
    outcome = stages.cache_aware_for(workload_source, einsum_graph, hardware_spec, solar.cache_dir)
    metadata: Metadata = {
        "buffer bytes": md.data_size(int(outcome.capacity_bytes)),
        "bytes cache-aware (provable lower bound)": md.data_size(int(outcome.lb_bytes))
        if getattr(outcome, "lb_bytes", None) is not None else Text("none"),
        "best modelled schedule (achievable)": md.data_size(int(outcome.bytes)) if outcome.ok else Text("none"),
        "bytes unfused-tiled": md.data_size(int(outcome.unfused_tiled_bytes))
        if outcome.unfused_tiled_bytes is not None else Text("some einsum does not fit alone"),
        "bytes fused (graph I/O)": md.data_size(int(outcome.fused_bytes or 0)),
        "proven optimal": bool(outcome.proven_optimal),
        "segments / einsums": f"{outcome.segments} / {outcome.einsums}",
        "solve seconds": md.seconds(outcome.solve_seconds),
        "note": outcome.note() or "none",
    }
    return Computed(outcome, digest(outcome.to_json()), metadata)


def inverse_roofline(workload_source: WorkloadSource, sol_bounds: BoundsRow, hardware_spec: HardwareSpec,
                     solar: AssetSettings) -> Computed[InverseRoofline | None]:
    """The peak FLOP/s and DRAM bandwidth needed to meet ``target_latency_s`` (None, with a note,
    when no target is configured), from the pair's bounds as ``sol_bounds`` holds them."""
    target = solar.target_latency_s
    inverse = None if target is None else \
        stages.inverse_for(workload_source, hardware_spec, target, sol_bounds.bounds)
    if inverse is None:
        return Computed(None, "no-target", {"note": "no target latency: set SolarConfig.target_latency_s"})
    metadata: Metadata = {"target latency": md.seconds(float(target))}
    for mode in ("fused", "unfused_graph"):
        part = getattr(inverse, mode)
        metadata[f"min FLOP/s ({mode})"] = md.flop_rate(float(part.min_flop_per_s))
        metadata[f"min DRAM bytes/s ({mode})"] = md.byte_rate(float(part.min_bytes_per_s))
        metadata[f"FLOP/s needed ({mode})"] = md.factor(float(part.compute_factor), "the peak")
        metadata[f"bandwidth needed ({mode})"] = md.factor(float(part.bandwidth_factor), "the bandwidth")
    return Computed(inverse, digest(repr(inverse)), metadata)
