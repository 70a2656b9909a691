"""Headroom (measured / SOL) and the violation audit, as report-row columns.

A row gets measured columns only when its hardware is the machine the run used (``host``):
a time measured on this CPU divided by an H100 bound means nothing. Headroom uses the median;
the audit uses each backend's *fastest* run, because no run may beat a true lower bound.

Provable lower bounds on the host, audited as violations: **fused** (every FLOP at peak, graph
inputs / weights / outputs through DRAM once: the caches are flushed before each run) and the
**cache-aware lower bound** (``sol_cache_aware_lb_s``: no schedule with all the chip's on-chip
storage moves less, see docs/cache_aware_bound.md). Neither **unfused** nor the **best modelled
cache-aware schedule** (``sol_cache_aware_s``, achievable: an upper bound on the optimum) is a
lower bound of every schedule: unfused charges each IR kernel its own DRAM round trip, while a
framework runs some IR kernels as one (a softmax is three IR kernels, one ATen kernel) and keeps
intermediates smaller than the last-level cache on chip; a real schedule can beat the modelled
space. A run below either is listed in ``violation_detail`` as explained, with both figures,
and ``violation`` stays False.
"""
from __future__ import annotations

from collections.abc import Sequence

from ir_schemas import ReportRow
from solar_assets.measure.runtime import Timing
from solar_assets.measure.workload import WorkloadMeasurement

HOST = "host"


def _fmt(t: float) -> str:
    from solar_assets.formatting import format_seconds

    return format_seconds(t)


def _ratio(measured: float | None, bound: float | None) -> float | None:
    if measured is None or bound is None or not bound > 0:
        return None
    return measured / bound


def audit(row: ReportRow, timings: Sequence[Timing]) -> tuple[bool, list[str]]:
    """(violation, one clause per bound some backend's fastest run beat)."""
    violation, clauses = False, []
    true_bounds = [("fused", row.sol_fused_s)]
    lower = getattr(row, "sol_cache_aware_lb_s", None)
    if lower is not None:
        true_bounds.append(("cache-aware lower", lower))
    for t in timings:
        for mode, bound in true_bounds:
            if t.min_s < bound:
                violation = True
                clauses.append(f"VIOLATION: {t.label} fastest run {_fmt(t.min_s)} < {mode} bound {_fmt(bound)} "
                               f"({t.min_s / bound:.3g}×) on {row.hardware}")
        if row.sol_cache_aware_s is not None and t.min_s < row.sol_cache_aware_s:
            clauses.append(f"explained: {t.label} fastest run {_fmt(t.min_s)} < the best modelled cache-aware "
                           f"schedule {_fmt(row.sol_cache_aware_s)} (achievable, an upper bound on the optimum: "
                           "a schedule outside the modelled space can beat it)")
        for mode, bound in (("unfused", row.sol_unfused_s), ("unfused whole-graph", row.sol_unfused_graph_s)):
            if t.min_s < bound:
                intermediates = max(row.bytes_unfused - row.bytes_fused, 0)
                onchip = f" ({row.onchip_buffer_bytes / 2**20:.3g} MiB of cache on {row.hardware})" \
                    if row.onchip_buffer_bytes else ""
                clauses.append(
                    f"explained: {t.label} fastest run {_fmt(t.min_s)} < {mode} bound {_fmt(bound)}: the unfused "
                    f"bound sends each of the {row.einsums} IR kernels' operands through DRAM "
                    f"({intermediates / 2**20:.3g} MiB more than the graph's I/O), but {t.label} runs some "
                    f"IR kernels as one and keeps intermediates in cache{onchip}; fused and the cache-aware "
                    f"lower bound are the lower bounds")
    return violation, clauses


def add_measurement(row: ReportRow, measurement: WorkloadMeasurement, host: str = HOST) -> ReportRow:
    """The row with the measured, headroom and audit columns (unchanged unless ``row.hardware``
    is ``host``, the hardware the measurement ran on)."""
    if row.hardware != host or row.workload != measurement.workload:
        return row
    timings = [t for t in measurement.timings.values() if t.ok]
    default = measurement.default
    by_backend = {b: t for b, t in measurement.timings.items() if t.ok}
    eager = by_backend.get("eager")
    compiled = by_backend.get("compile")
    violation, clauses = audit(row, timings)
    median = default.median_s if default else None
    return row.model_copy(update={
        "measured_s": median,
        "measured_backend": default.label if default else None,
        "measured_spread_s": default.spread_s if default else None,
        "measured_min_s": default.min_s if default else None,
        "measured_runs": len(default.times_s) if default else None,
        "measured_eager_s": eager.median_s if eager else None,
        "measured_compile_s": compiled.median_s if compiled else None,
        "headroom_unfused": _ratio(median, row.sol_unfused_s),
        "headroom_fused": _ratio(median, row.sol_fused_s),
        "headroom_cache_aware": _ratio(median, row.sol_cache_aware_s),
        "headroom_fused_eager": _ratio(eager.median_s if eager else None, row.sol_fused_s),
        "headroom_fused_compile": _ratio(compiled.median_s if compiled else None, row.sol_fused_s),
        "violation": violation,
        "violation_detail": "; ".join(clauses),
        "measured_note": "; ".join(measurement.notes),
    })
