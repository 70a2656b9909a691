"""Which rows the report's charts draw: every workload up to a readable count, else the slowest.

A chart of KernelBench's 270 workloads on six parts was no picture anyone reads (a 700-inch wide
projection, 1,620 legend entries) and a third of a cold call's serial tail (~35 s of drawing,
twice: the asset's report and the run directory's). The table keeps every row; the charts show
the workloads with the longest fused bound on any part (where the time goes) and say so.
"""
from __future__ import annotations

from collections.abc import Sequence

from ir_schemas import ReportRow

MAX_CHARTED_WORKLOADS = 24  # the projection's bars
MAX_ROOFLINE_WORKLOADS = 8  # a roofline panel's legend (and its ten colours)


def charted_rows(rows: Sequence[ReportRow], limit: int = MAX_CHARTED_WORKLOADS) -> tuple[list[ReportRow], str | None]:
    """``(rows to draw, a footnote saying what was left out or None)``."""
    slowest: dict[str, float] = {}
    for r in rows:
        slowest[r.workload] = max(slowest.get(r.workload, 0.0), r.sol_fused_s or 0.0)
    if len(slowest) <= limit:
        return list(rows), None
    kept = set(sorted(slowest, key=lambda w: (-slowest[w], w))[:limit])
    note = (f"the {limit} of {len(slowest)} workloads with the longest fused bound on any part; "
            "every workload is in the report's table")
    return [r for r in rows if r.workload in kept], note
