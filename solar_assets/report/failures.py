"""A workload that got no row, as the report lists it (``failures.csv``, ``report.json``).

Kept apart from the writers so that a call with nothing to write (a warm ``solar analyze``)
names its failures without importing pandas (~1 s)."""
from __future__ import annotations

from pathlib import Path

from ir_schemas import Failure


def failure_from_error(error: str, stage: str = "", status: str = "failed") -> Failure:
    """A failure from its one-line message ``<path>: <problem>`` (the path names the workload)."""
    source = error.split(": ", 1)[0] if ": " in error else ""
    return Failure(workload=Path(source).stem if source else "", source=source, status=status, stage=stage,
                   reason=error)


def failure_from_result(result) -> Failure:
    """The failure of a workload result that produced no row (``pipeline.WorkloadResult``): its
    status (``unfinished`` when a limit stopped it), stage and reason."""
    status = "unfinished" if "unfinished" in (result.seconds or {}) else "failed"
    return Failure(workload=result.workload, source=str(result.path), status=status, stage=result.failed_stage or "",
                   reason=result.error)
