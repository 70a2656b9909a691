"""Build report rows from the stages' results, and turn rows into a DataFrame.

``assemble_row`` is the one place a row is made, for the plain chain (``solar_assets.chain``)
and the Dagster ``sol_bounds`` asset alike; ``complete_row`` adds what is computed apart
(the inverse roofline, the cache-aware bracket) to a row made before, as ``headroom_report``
does with the latest partitions.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from ir_schemas import ReportRow
from solar_assets.report.capacity import dram_capacity_note
from solar_assets.report.library_counts import library_counts_note
from solar_assets.report.masking import masked_products_note

if TYPE_CHECKING:
    from solar_assets.bounds import InverseRoofline, SolBounds
    from solar_assets.bounds.cache_aware import CacheAwareOutcome
    from solar_assets.graph import EinsumGraph
    from solar_assets.hardware import HardwareSpec
    from solar_assets.translate import Translation
    from solar_assets.validate.compare import ValidationResult
    from solar_assets.validate.validated import ValidatedIR
    from solar_assets.workloads import WorkloadSource


def assemble_row(source: WorkloadSource, validated: ValidatedIR, graph: EinsumGraph, bounds: SolBounds,
                 hardware: HardwareSpec, *, inverse: InverseRoofline | None = None,
                 target_latency_s: float | None = None, cache_aware: CacheAwareOutcome | None = None) -> ReportRow:
    """The report row of a validated workload on one hardware: its counts and SOL bounds, and the
    inverse roofline and cache-aware columns where given (``complete_row``)."""
    row = report_row(source, validated.translation, validated.result, graph, bounds, hardware,
                     validated_size=validated.validated_size)
    return complete_row(row, inverse=inverse, target_latency_s=target_latency_s, cache_aware=cache_aware)


def complete_row(row: ReportRow, *, inverse: InverseRoofline | None = None, target_latency_s: float | None = None,
                 cache_aware: CacheAwareOutcome | None = None) -> ReportRow:
    """``row`` with the inverse-roofline columns (``inverse`` at ``target_latency_s``) and the
    cache-aware columns (``cache_aware``) filled where given."""
    row = add_inverse(row, inverse, target_latency_s) if inverse is not None else row
    return add_cache_aware(row, cache_aware) if cache_aware is not None else row


def report_row(source: WorkloadSource, translation: Translation, validation: ValidationResult, graph: EinsumGraph,
               bounds: SolBounds, hardware: HardwareSpec, inverse: InverseRoofline | None = None,
               target_latency_s: float | None = None, validated_size: str = "full") -> ReportRow:
    """One row: a validated workload's counts and its SOL bounds on one hardware.

    ``source`` a WorkloadSource, ``translation`` a Translation, ``validation`` a ValidationResult,
    ``graph`` an EinsumGraph, ``bounds`` a SolBounds, ``hardware`` a HardwareSpec,
    ``inverse`` an InverseRoofline or None, ``validated_size`` the size the IR was validated at
    ("full", or the rebound constants such as "BATCH=3,DIM=64").
    """
    unfused, fused = bounds.unfused, bounds.fused
    # the report's errors are those of the float32 comparison with the framework's own outputs
    # (the float64 strong check is far tighter and lives in the validation table)
    as_written = [c for c in validation.checks if c.reference == "outputs"] or list(validation.checks)
    row = ReportRow(
        workload=source.name,
        source=str(source.path),
        hardware=hardware.name,
        dtype=str(bounds.dtype),
        translator=translation.translator,
        validated=bool(validation.ok),
        validated_size=validated_size,
        max_abs_error=max((float(c.max_abs_error) for c in as_written), default=0.0),
        max_rel_error=max((float(c.max_rel_error) for c in as_written), default=0.0),
        macs=int(graph.macs),
        flops=int(graph.flops),
        bytes_unfused=int(unfused.bytes),  # per framework op (per IR kernel without origin ops)
        bytes_fused=int(graph.io_bytes),
        sol_unfused_s=float(unfused.time_s),
        sol_fused_s=float(fused.time_s),
        bound_unfused=unfused.limiter,
        bound_fused=fused.limiter,
        sol_unfused_graph_s=float(bounds.unfused_graph.time_s),
        intensity_unfused_flop_per_byte=float(unfused.intensity_flop_per_byte),
        intensity_fused_flop_per_byte=float(fused.intensity_flop_per_byte),
        peak_flop_per_s=float(bounds.peak_flop_per_s),
        dram_bytes_per_s=float(bounds.dram_bytes_per_s),
        einsums=sum(1 for n in graph.nodes if n.kind != "reshape"),  # a reshape is a view: no data moves
        onchip_buffer_bytes=int(hardware.onchip_buffer_bytes),
        notes="; ".join(n for n in (dram_capacity_note(graph, hardware), masked_products_note(graph),
                                    library_counts_note(graph)) if n),
        **peak_fields(bounds),
    )
    return add_inverse(row, inverse, target_latency_s) if inverse is not None else row


def peak_fields(bounds: SolBounds) -> dict[str, str | int | float | None]:
    """The row's per-unit peak columns and the per-kernel unfused figure, from a ``SolBounds``."""
    kernel = getattr(bounds, "unfused_kernel", None)
    return {
        "fp32_math": str(getattr(bounds, "fp32_math", "")),
        "compute_unit": str(getattr(bounds, "compute_unit", "")),
        "peaks_fused": bounds.peaks_fused() if hasattr(bounds, "peaks_fused") else "",
        "peaks_unfused": bounds.peaks_unfused() if hasattr(bounds, "peaks_unfused") else "",
        "bytes_unfused_kernel": int(kernel.bytes) if kernel is not None else None,
        "sol_unfused_kernel_s": float(kernel.time_s) if kernel is not None else None,
    }


def add_inverse(row: ReportRow, inverse: InverseRoofline | None, target_latency_s: float | None = None) -> ReportRow:
    """The row with the inverse-roofline columns filled from an ``InverseRoofline``."""
    if inverse is None:
        return row
    fused, unfused = inverse.fused, inverse.unfused_graph  # the unfused inverse is of the whole-graph form
    return row.model_copy(update={
        "target_latency_s": float(target_latency_s if target_latency_s is not None else inverse.target_latency_s),
        "min_flop_per_s_fused": float(fused.min_flop_per_s),
        "min_bytes_per_s_fused": float(fused.min_bytes_per_s),
        "min_flop_per_s_unfused": float(unfused.min_flop_per_s),
        "min_bytes_per_s_unfused": float(unfused.min_bytes_per_s),
        "compute_factor_fused": float(fused.compute_factor),
        "bandwidth_factor_fused": float(fused.bandwidth_factor),
    })


def add_cache_aware(row: ReportRow, outcome: CacheAwareOutcome | None) -> ReportRow:
    """The row with the cache-aware columns filled from a ``CacheAwareOutcome``: the provable lower
    bound and the best modelled schedule (achievable), each timed with the row's own peak and
    bandwidth, so they sit on the same roofline as the other modes."""
    from solar_assets.bounds.cache_aware import outcome_time_s

    if outcome is None:
        return row
    timed = outcome_time_s(outcome, row.flops, row.peak_flop_per_s, row.dram_bytes_per_s)
    lower = outcome_time_s(outcome, row.flops, row.peak_flop_per_s, row.dram_bytes_per_s, lower=True)
    return row.model_copy(update={
        "onchip_buffer_bytes": int(outcome.capacity_bytes),
        "bytes_cache_aware": outcome.bytes if outcome.ok else None,
        "bytes_unfused_tiled": outcome.unfused_tiled_bytes if outcome.ok else None,
        "sol_cache_aware_s": timed[0] if timed else None,
        "bound_cache_aware": timed[1] if timed else None,
        "cache_aware_proven_optimal": outcome.proven_optimal if outcome.ok else None,
        "cache_aware_note": outcome.note(),
        "bytes_cache_aware_lb": getattr(outcome, "lb_bytes", None),
        "sol_cache_aware_lb_s": lower[0] if lower else None,
        "bound_cache_aware_lb": lower[1] if lower else None,
        "onchip_total_bytes": getattr(outcome, "lb_capacity_bytes", None),
        "cache_aware_tiles": getattr(outcome, "tiles", "") if outcome.ok else "",
    })


def rows_to_frame(rows: Sequence[ReportRow]) -> pd.DataFrame:
    """A DataFrame with one column per ReportRow field, in the model's field order."""
    columns = list(ReportRow.model_fields)
    return pd.DataFrame([r.model_dump() for r in rows], columns=columns)
