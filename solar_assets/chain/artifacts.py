"""The typed values that cross stages of the chain (frozen: a stage never edits its input).

Source → ``WorkloadSource`` (workloads) → ``Translation`` (translate) → ``SizeChoice`` →
``Golden`` (golden) and the re-traced ``Translation`` at that size → ``ValidatedIR`` (validate)
→ ``EinsumGraph`` (graph) → ``SolBounds`` / ``CacheAwareOutcome`` (bounds) → ``ReportRow``
(report). Each is defined by the stage that makes it; the chain's own are here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ir_schemas import PerOpRow, ReportRow
from solar_assets.validate.validated import ValidatedIR

if TYPE_CHECKING:
    from solar_assets.bounds import SolBounds
    from solar_assets.sizing import ValidationSize, ValidationSizeError

__all__ = ["BoundsRow", "SizeChoice", "ValidatedIR", "WorkloadResult"]


@dataclass(frozen=True)
class SizeChoice:
    """Where the IR is validated: at ``size`` (full, or constants scaled down), or, for a tracer
    IR no size fits (``size`` None), node-wise at the file's own size, ``error`` saying why."""

    size: ValidationSize | None
    error: ValidationSizeError | None = None

    @property
    def nodewise(self) -> bool:
        return self.size is None

    @property
    def label(self) -> str | None:
        return self.size.label if self.size is not None else None


@dataclass(frozen=True)
class BoundsRow:
    """The bounds of one workload on one hardware and the report row made from them."""

    bounds: SolBounds
    row: ReportRow


@dataclass
class WorkloadResult:
    """What one workload gave: a row per hardware, or the error that stopped it (the chain's
    output, filled in as it runs; not handed between stages)."""

    workload: str
    path: str
    rows: list[ReportRow] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # by stage (analyze_workload: STAGES)
    error: str | None = None
    failed_stage: str | None = None
    validated_size: str | None = None  # "full" or "BATCH=3,..." once the size is chosen
    per_op: list[PerOpRow] = field(default_factory=list)  # one per framework op and hardware
    # a result answered by a call record: its per-op rows stay in the record's file until needed
    # (``dagster_defs.call_records.read_per_op``), ``per_op`` empty; the digest names them meanwhile
    per_op_file: str | None = None
    per_op_digest: str = ""
    op_joins: list = field(default_factory=list)  # measure.op_join.OpJoin per measured backend (--measure --per-op)
    activity: list[str] = field(default_factory=list)  # what its code did outside its lane (workers.containment)

    def mark_rows(self) -> None:
        """Its rows' notes name what its run did outside its lane (network use, writes elsewhere,
        processes left running), so the table, the JSON and the report carry it, not only the log."""
        if self.activity:
            extra = "; ".join(self.activity)
            self.rows = [r.model_copy(update={"notes": f"{r.notes}; {extra}" if r.notes else extra})
                         if extra not in r.notes else r for r in self.rows]

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def total_s(self) -> float:
        return sum(self.seconds.values())
