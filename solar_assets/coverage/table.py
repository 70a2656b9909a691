"""The coverage report: a table a person reads, JSON a program reads, and the summary line."""
from __future__ import annotations

import json
from collections.abc import Sequence

from solar_assets.coverage.workload import CoverageRow

YES, NO = "✓", "✗"
NOTE_WIDTH = 160


def coverage_summary(rows: Sequence[CoverageRow]) -> str:
    """``coverage: N/M translated, K/M validated``."""
    m = len(rows)
    translated = sum(r.translated for r in rows)
    validated = sum(r.validated for r in rows)
    return f"coverage: {translated}/{m} translated, {validated}/{m} validated"


def _error(x: float | None) -> str:
    return "-" if x is None else f"{x:.2g}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def format_coverage(rows: Sequence[CoverageRow]) -> str:
    """One line per workload, then a blank line and the summary line (the last line). JAX rows also
    show solar's FLOPs and unfused bytes over XLA's cost analysis (``FLOPs/XLA``, ``bytes/XLA``)."""
    table = [("workload", "translated", "validated", "validated size", "max abs err", "seconds", "FLOPs/XLA",
              "bytes/XLA", "note")]
    for r in rows:
        note = r.note if len(r.note) <= NOTE_WIDTH else r.note[:NOTE_WIDTH - 1] + "…"
        table.append((r.workload, YES if r.translated else NO, YES if r.validated else NO, r.validated_size or "-",
                      _error(r.max_abs_error), f"{r.seconds:.1f}", _ratio(r.xla_flops_ratio),
                      _ratio(r.xla_bytes_ratio), note))
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    right = {4, 5, 6, 7}
    lines = []
    for n, line in enumerate(table):
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))]
        lines.append("  ".join([*cells, line[-1]]).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths) + "  ----")
    return "\n".join([*lines, "", coverage_summary(rows)])


def coverage_json(rows: Sequence[CoverageRow]) -> str:
    """``{"rows": [...], "total": M, "translated": N, "validated": K, "summary": "coverage: ..."}``."""
    payload = {
        "rows": [r.as_dict() for r in rows],
        "total": len(rows),
        "translated": sum(r.translated for r in rows),
        "validated": sum(r.validated for r in rows),
        "summary": coverage_summary(rows),
    }
    return json.dumps(payload, indent=2) + "\n"
