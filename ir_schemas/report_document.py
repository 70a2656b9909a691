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
    module_class: str = Field(default="", description="The innermost module's class ('LayerNorm'); '' when unknown "
                              "(JAX, an agent-written IR).")
    label: str = Field(default="", description="Unique within the workload: the op and its occurrence in program "
                       "order ('relu#3').")
    source: str = Field(default="", description="The user's line that made the call ('model.py:42'); '' when unknown.")
    scope: str = Field(default="", description="The modules the call ran inside, outermost first, as path=Class "
                       "joined by ';' ('=Model;features=Sequential;features.1=ReLU': the model's path is empty); "
                       "'' when unknown.")
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
    params: int = Field(default=0, description="Parameter elements the op reads, each parameter counted at the "
                        "first op (in program order) that reads it: summed over a module's ops, its parameters.")
    call: str = Field(default="", description="The user's call this op is part of, with its occurrence "
                      "('linear#2': the addmm and the permute of an nn.Linear are parts of one call); what a "
                      "profile of the user's run is joined on. '' when unknown.")
    phase: str = Field(default="", description="Of a training step (--train): 'forward', 'backward' or "
                       "'optimizer' (Origin.phase); '' for one forward pass.")
    measured_s: float | None = Field(default=None, description="With a per-op measurement: the median measured "
                                     "time of the op's call, where the call is this op alone; None otherwise.")
    headroom: float | None = Field(default=None, description="measured_s / time_s; None when not measured.")
    pct_of_sol: float | None = Field(default=None, description="100 × time_s / measured_s: how close the run "
                                     "came to the op's SOL; None when not measured.")

    def to_dict(self) -> dict:
        return self.model_dump()


class ModuleRow(BaseModel):
    """One module of one workload on one hardware: the sums over the framework ops that ran inside
    it (its submodules' included), as FlopCounterMode's per-module tree counts them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workload: str
    hardware: str
    module: str = Field(description="The module path ('features.1'; JAX: 'Model/Dense_0'); '' for the whole model.")
    module_class: str = Field(description="Its class ('ReLU'), where some op's scope named it; '' when unknown.")
    depth: int = Field(description="Components in the path: 0 for the whole model.")
    ops: int = Field(description="Framework op calls inside it.")
    macs: int
    flops: int
    bytes: int = Field(description="The sum of its ops' one-kernel DRAM traffic (unfused).")
    params: int = Field(description="Parameter elements its ops read (PerOpRow.params summed).")
    time_s: float = Field(description="The sum of its ops' unfused roofline times, seconds.")
    share: float = Field(description="time_s / the whole model's.")

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
    per_module: list[ModuleRow] = Field(default_factory=list, description="The per-op breakdown rolled up by "
                                        "module, every depth (report.per_module).")
    measured_per_op: list["MeasuredOpRow"] = Field(default_factory=list, description="With --measure --per-op: "
                                                   "each call of the eager run against its per-op SOL.")


class MeasuredOpRow(BaseModel):
    """One call of the user's code (a framework op as their eager run calls it) measured on one
    hardware by one backend, against its per-op SOL: the join of a profile with the per-op rows."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workload: str
    hardware: str
    backend: str = Field(description="What ran: 'torch eager', 'jax eager', or 'profile <file>' for a trace "
                         "the user brought.")
    rank: int = Field(description="1 = the most recoverable time (measured − SOL) of this workload × backend.")
    call: str = Field(description="The call and its occurrence ('linear#2'), as PerOpRow.call.")
    op: str = Field(description="The op as the profile names it ('aten::linear', 'eqn3 dot_general').")
    module: str = Field(default="", description="The module path of the call's ops ('encoder.fc1'); '' when none.")
    module_class: str = Field(default="", description="Its class ('Linear'); '' when unknown.")
    source: str = Field(default="", description="The user's line of the call ('model.py:42'); '' when unknown.")
    ir_ops: str = Field(description="The per-op rows of the call, '+'-joined labels ('permute#1+addmm#1'); '' for "
                        "a call that moves no data (a view).")
    sol_s: float = Field(description="The call's per-op SOL: the sum of its rows' time_s (each op as one eager "
                         "kernel, its tensors crossing DRAM once each).")
    floor_s: float = Field(description="What no run of the call can beat on this hardware: its compute at peak, "
                           "and the DRAM traffic of its tensors beyond twice the on-chip buffer (what was cached "
                           "before the call and what may stay cached after it). The audit's bound.")
    measured_s: float = Field(description="Median over the measured iterations, seconds.")
    p10_s: float
    p90_s: float
    min_s: float
    runs: int = Field(description="Iterations the call was measured in.")
    device_time: bool = Field(description="True: the device kernels' time; False: the call's host time.")
    headroom: float | None = Field(description="measured_s / sol_s; None for a call with no SOL (a view).")
    pct_of_sol: float | None = Field(description="100 × sol_s / measured_s; None for a view.")
    recoverable_s: float = Field(description="measured_s − sol_s: what a kernel at the op's SOL would save.")
    violation: bool = Field(description="The fastest run beat floor_s: a bound or a measurement is wrong.")
    audit: str = Field(default="", description="Why a run below sol_s is or is not a violation; '' when none is.")

    def to_dict(self) -> dict:
        return self.model_dump()


ReportDocument.model_rebuild()
