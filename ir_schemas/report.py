"""One row of solar's report: a workload analysed on one hardware target.

Field names are a stable interface (the ``rows`` of the document ``solar analyze --json`` prints);
later versions add fields and never rename one.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

REPORT_VERSION = "1"
Limiter = Literal["compute", "memory"]


class ReportRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workload: str = Field(description="Workload name (file stem).")
    source: str = Field(description="Path of the workload file.")
    hardware: str = Field(description="Hardware spec name (stem of hardware/NAME.yaml).")
    dtype: str = Field(description=(
        "Dominant dtype of the workload (the one moving the most bytes); each node's peak follows its own "
        "dtype and unit (see peaks_fused, peaks_unfused)."))
    translator: str = Field(description="Which translator produced the IR (tracer or agent).")
    validated: bool = Field(description="The IR reproduced the golden outputs within tolerance.")
    max_abs_error: float = Field(description="Largest |IR - golden| over all outputs (float32 run).")
    max_rel_error: float = Field(description="Largest |IR - golden| / max|golden| over all outputs.")
    macs: int = Field(description="Multiply-accumulates in sum-of-products kernels.")
    flops: int = Field(description="All floating-point operations (1 MAC = 2 FLOP; elementwise ops 1 each).")
    bytes_unfused: int = Field(description=(
        "DRAM bytes with one round trip per framework op (what eager runs): each op's boundary tensors once; "
        "per IR kernel where the IR carries no origin op (bytes_unfused_kernel)."))
    bytes_fused: int = Field(description="DRAM bytes of graph inputs, weights and outputs, each once.")
    sol_unfused_s: float = Field(description=(
        "Sum over framework ops of max(busiest unit's time, boundary bytes/bandwidth), seconds."))
    sol_fused_s: float = Field(description="max(busiest unit's time, fused bytes/bandwidth), seconds.")
    bound_unfused: Limiter = Field(description="Resource that limits the unfused bound.")
    bound_fused: Limiter = Field(description="Resource that limits the fused bound.")
    sol_unfused_graph_s: float = Field(description="Whole-graph unfused form max(busiest unit's time, bytes_unfused/bandwidth).")
    intensity_unfused_flop_per_byte: float
    intensity_fused_flop_per_byte: float
    peak_flop_per_s: float = Field(description=(
        "Effective peak FLOP/s: flops / the busiest unit's time (the units run concurrently); the unit's own "
        "peak when one unit at one dtype does all the work. flops / this is the compute time of every mode "
        "but unfused."))
    dram_bytes_per_s: float
    einsums: int = Field(description="Nodes of the einsum graph that compute or move data.")
    target_latency_s: float | None = Field(default=None, description="Inverse roofline target, if asked for.")
    min_flop_per_s_fused: float | None = Field(default=None, description="Peak needed to meet the target (fused).")
    min_bytes_per_s_fused: float | None = Field(default=None, description="Bandwidth needed to meet the target (fused).")
    min_flop_per_s_unfused: float | None = None
    min_bytes_per_s_unfused: float | None = None
    compute_factor_fused: float | None = Field(default=None, description="Needed peak / hardware peak (fused).")
    bandwidth_factor_fused: float | None = Field(default=None, description="Needed bandwidth / hardware bandwidth (fused).")
    # fields added later go last, so that CSV columns keep their positions
    validated_size: str = Field(default="full", description=(
        "Size the IR was validated at: 'full' (the file's own), or the module constants rebound for "
        "validation, e.g. 'BATCH=3,DIM=64'; the bounds are always of the full size."))
    onchip_buffer_bytes: int | None = Field(default=None, description=(
        "On-chip buffer capacity of the hardware that the cache-aware bound assumes."))
    bytes_cache_aware: int | None = Field(default=None, description=(
        "Best modelled schedule (achievable): the least DRAM bytes over the modelled tilings and fused "
        "segments with the hardware's on-chip buffer (L2; Pyomo + GLPK ILP). An upper bound on the "
        "optimum, not a lower bound; None when the solve failed (see cache_aware_note)."))
    bytes_unfused_tiled: int | None = Field(default=None, description=(
        "Minimum DRAM bytes with every einsum tiled on its own at the same buffer (no fusion); "
        "fused ≤ cache-aware lower bound ≤ cache-aware ≤ unfused-tiled always."))
    sol_cache_aware_s: float | None = Field(default=None, description=(
        "max(F/peak, bytes_cache_aware/bandwidth), seconds: the best modelled schedule's time "
        "(achievable), never used to judge a measurement."))
    bound_cache_aware: Limiter | None = Field(default=None, description="Resource that limits the cache-aware time.")
    cache_aware_proven_optimal: bool | None = Field(default=None, description=(
        "GLPK proved the ILP optimum of the modelled space; False when no schedule was modelled "
        "(a fallback to fused, see cache_aware_note)."))
    cache_aware_note: str = Field(default="", description=(
        "What ran: 'tiling-bound: ...' when the buffer forces more traffic than the unfused "
        "(infinite-buffer) bytes; 'fell back to fused: ...' when no schedule was modelled; the fusion "
        "summary; gathers whose traffic depends on the index values; the candidate set when not every "
        "trip count; or why the cache-aware figure is missing."))
    bytes_cache_aware_lb: int | None = Field(default=None, description=(
        "Provable lower bound on DRAM bytes for every schedule with onchip_total_bytes of on-chip "
        "storage: max(compulsory traffic, the largest single-contraction red-blue-pebble bound); "
        "see docs/cache_aware_bound.md."))
    sol_cache_aware_lb_s: float | None = Field(default=None, description=(
        "max(F/peak, bytes_cache_aware_lb/bandwidth), seconds: a provable lower bound, judged against "
        "measurements like the fused bound."))
    bound_cache_aware_lb: Limiter | None = Field(default=None, description=(
        "Resource that limits the cache-aware lower bound."))
    onchip_total_bytes: int | None = Field(default=None, description=(
        "All on-chip storage the provable lower bound assumes: L2 + shared memory / L1 + registers."))
    cache_aware_tiles: str = Field(default="", description=(
        "Tile candidate set behind bytes_cache_aware: 'all' (every trip count) or 'union' (divisors ∪ "
        "powers of two, when every trip count was estimated over the time budget); empty when no tiling "
        "search ran (every tensor fits the buffer at once, or a fallback)."))
    # measured on this host (solar analyze --measure); set only on rows of the hardware it ran on ("host")
    measured_s: float | None = Field(default=None, description=(
        "Median run time on this host of the default backend (the first of --backends that ran), "
        "caches flushed before every run; None unless measured, and only on the row of the hardware "
        "the run used ('host')."))
    measured_backend: str | None = Field(default=None, description=(
        "Backend of measured_s: 'torch eager', 'torch.compile', 'jax eager' or 'jax.jit'."))
    measured_spread_s: float | None = Field(default=None, description="p90 − p10 of the default backend's runs, seconds.")
    measured_min_s: float | None = Field(default=None, description=(
        "Fastest run of the default backend: what the violation audit compares with the bounds."))
    measured_runs: int | None = Field(default=None, description="Timed runs behind measured_s (after warm-up).")
    measured_eager_s: float | None = Field(default=None, description="Median run time, eager backend (torch eager / jax op-by-op).")
    measured_compile_s: float | None = Field(default=None, description="Median run time, compiled backend (torch.compile / jax.jit).")
    headroom_unfused: float | None = Field(default=None, description="measured_s / sol_unfused_s.")
    headroom_fused: float | None = Field(default=None, description="measured_s / sol_fused_s: how far from SOL the run is.")
    headroom_cache_aware: float | None = Field(default=None, description=(
        "measured_s / sol_cache_aware_s (the best modelled schedule, achievable); None when absent."))
    headroom_fused_eager: float | None = Field(default=None, description="measured_eager_s / sol_fused_s.")
    headroom_fused_compile: float | None = Field(default=None, description="measured_compile_s / sol_fused_s.")
    violation: bool = Field(default=False, description=(
        "Some backend's fastest run beat a provable lower bound (fused or the cache-aware lower bound) "
        "of this hardware; never clamped: violation_detail gives both figures."))
    violation_detail: str = Field(default="", description=(
        "Each bound a run beat, with both figures; a run below the unfused bound (not a lower bound of "
        "every schedule: it charges each IR kernel its own DRAM round trip) or below the best modelled "
        "cache-aware schedule (achievable, an upper bound) is listed as explained, not as a violation."))
    measured_note: str = Field(default="", description=(
        "Notes on the measurement: threads used where fewer than the cores were faster, why a backend "
        "has no measurement (failed, skipped)."))
    notes: str = Field(default="", description=(
        "Warnings about the workload on this hardware, '; '-separated: 'exceeds DRAM capacity of <part> "
        "(<X GiB> > <Y GiB>)' when its inputs, weights, outputs and largest intermediate at its own size "
        "do not fit the part's DRAM (the bounds are still given)."))
    # per-node peaks (units run concurrently) and unfused per framework op
    fp32_math: str = Field(default="", description=(
        "Policy for fp32 contractions: 'tf32', 'ieee', or 'auto (...)' with what the frameworks' defaults "
        "and the file's settings gave PyTorch convolutions, PyTorch matmuls, JAX ops and ops of unknown origin."))
    compute_unit: str = Field(default="", description=(
        "The busiest unit ('matrix': the tensor cores, one unit across dtypes; 'vector.<dtype>'): its time is "
        "the compute time of the fused, whole-graph unfused and cache-aware bounds."))
    peaks_fused: str = Field(default="", description=(
        "Per unit, busiest first, its busy time and the peak(s) it ran at: the compute side of the fused, "
        "whole-graph unfused and cache-aware bounds."))
    peaks_unfused: str = Field(default="", description=(
        "The unit and peak of each node, counted ('matrix.tf32 4.947e+14 FLOP/s x 2 nodes; ...'): the unfused "
        "bounds charge each node on its own unit."))
    bytes_unfused_kernel: int | None = Field(default=None, description=(
        "DRAM bytes when every IR kernel reads its operands and writes its output (≥ bytes_unfused)."))
    sol_unfused_kernel_s: float | None = Field(default=None, description=(
        "Sum over IR kernels of max(F/its unit's peak, B/bandwidth), seconds (≥ sol_unfused_s)."))
    nonfinite_note: str = Field(default="", description=(
        "Fields whose value was not a finite number, written as null in report.json (e.g. 'sol_fused_s was inf')."))
