"""The report as one document: ``report.json`` of a ``solar analyze`` run.

``{"schema": "solar.report.v2", "solar_version": ..., "created": ..., "rows": [ReportRow...],
"failures": [Failure...], "per_op": [PerOpRow...]}``, also what ``solar analyze --json`` prints:
the rows are ``ir_schemas.report.ReportRow``; failures say which workloads got no row and
why; per_op is the per-framework-op breakdown (``solar_assets.report.per_op``). Fields are added,
never renamed; ``schema`` changes only when a reader would misread the document.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ir_schemas.report import ReportRow

REPORT_SCHEMA = "solar.report.v2"


class Failure(BaseModel):
    """A workload that produced no report row."""

    model_config = ConfigDict(extra="forbid")

    workload: str = Field(description="Workload name (file stem), or the path as given when it is not a file.")
    source: str = Field(description="The path as given.")
    status: str = Field(description="'failed' (a stage raised: the reason says which and why) or 'unfinished' "
                        "(its worker was stopped: time or memory limit, or a crash).")
    stage: str = Field(default="", description="The stage that stopped it: input, trace, size, golden, validate, "
                       "graph, bounds, cache_aware, measure; '' when unknown.")
    reason: str = Field(description="One line naming the file and the problem.")


class PerOpRow(BaseModel):
    """One framework op call of one workload on one hardware: what eager runs as one kernel."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workload: str
    hardware: str
    rank: int = Field(description="1 = the largest share of this workload × hardware's unfused time.")
    node: str = Field(description="origin.node ('convolution_1', 'eqn12'); the IR node's name without an origin.")
    op: str = Field(description="'aten.convolution.default', 'dot_general'; '' without an origin.")
    module: str = Field(description="nn_module_stack path ('encoder.layers.3.norm1') or JAX name stack; '' when none.")
    macs: int
    flops: int
    bytes: int = Field(description="One eager kernel's DRAM traffic: tensors crossing the op's boundary, once each.")
    compute_s: float = Field(description="Compute time of the op's nodes, each at its own peak, seconds.")
    memory_s: float = Field(description="bytes / DRAM bandwidth, seconds.")
    time_s: float = Field(description="max(compute_s, memory_s): the op's unfused roofline time, seconds.")
    share: float = Field(description="time_s / the sum of time_s over the workload's ops on this hardware.")
    limiter: str = Field(description="'compute' when compute_s > memory_s, else 'memory'.")
    ir_nodes: int = Field(description="Einsum nodes lowered from the op.")
    exact: bool = Field(description="False when some boundary byte count is a lower bound (see graph/op_groups.py).")

    def to_dict(self) -> dict:
        return self.model_dump()


class ReportDocument(BaseModel):
    """``report.json``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(default=REPORT_SCHEMA, alias="schema", description="Format of this document.")
    solar_version: str = Field(description="Version of solar that wrote it.")
    created: str = Field(description="When it was written, ISO 8601 UTC ('2026-12-01T09:30:00Z').")
    rows: list[ReportRow] = Field(description="One row per workload × hardware that produced bounds.")
    failures: list[Failure] = Field(default_factory=list, description="Workloads that produced no row.")
    per_op: list[PerOpRow] = Field(default_factory=list, description="The per-op breakdown of every row.")
