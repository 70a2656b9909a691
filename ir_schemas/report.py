"""One row of solar's report: a workload analysed on one hardware target.

Field names are a stable interface (``solar analyze --json`` prints a list of these);
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
    dtype: str = Field(description="Dominant dtype of the workload; selects the peak FLOP/s.")
    translator: str = Field(description="Which translator produced the IR (tracer or agent).")
    validated: bool = Field(description="The IR reproduced the golden outputs within tolerance.")
    max_abs_error: float = Field(description="Largest |IR - golden| over all outputs (float32 run).")
    max_rel_error: float = Field(description="Largest |IR - golden| / max|golden| over all outputs.")
    macs: int = Field(description="Multiply-accumulates in sum-of-products kernels.")
    flops: int = Field(description="All floating-point operations (1 MAC = 2 FLOP; elementwise ops 1 each).")
    bytes_unfused: int = Field(description="DRAM bytes when every einsum reads its operands and writes its output.")
    bytes_fused: int = Field(description="DRAM bytes of graph inputs, weights and outputs, each once.")
    sol_unfused_s: float = Field(description="Sum over einsums of max(F/peak, B/bandwidth), seconds.")
    sol_fused_s: float = Field(description="max(total F/peak, fused bytes/bandwidth), seconds.")
    bound_unfused: Limiter = Field(description="Resource that limits the unfused bound.")
    bound_fused: Limiter = Field(description="Resource that limits the fused bound.")
    sol_unfused_graph_s: float = Field(description="Whole-graph unfused form max(ΣF/peak, ΣB/bandwidth).")
    intensity_unfused_flop_per_byte: float
    intensity_fused_flop_per_byte: float
    peak_flop_per_s: float = Field(description="Peak FLOP/s used (the hardware's dense peak at `dtype`).")
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
