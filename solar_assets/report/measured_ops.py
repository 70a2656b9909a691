"""The per-op headroom as text and CSV: which call is far from its speed of light, and how far.

Ranked by recoverable time (measured − per-op SOL: what a kernel at the op's SOL would save), so
the first line is the first kernel to work on. Every joined figure, every call that did not join
and every violation of a call's floor is printed: nothing of the join is left out silently.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ir_schemas import MeasuredOpRow
from solar_assets.report.per_module import module_label
from solar_assets.report.table import clip_left, elide_middle, format_seconds, render_columns

OpJoin = Any
"""``solar_assets.measure.op_join.OpJoin`` (the report formats what the measure stage joined; it
does not import it: measure uses the report's formatting)."""

MEASURED_OPS_STEM = "measured_per_op"
COLUMNS = tuple(MeasuredOpRow.model_fields)


def _x(value: float | None) -> str:
    return f"{value:.3g}×" if value is not None else "-"


def _pct(value: float | None) -> str:
    return f"{value:.3g} %" if value is not None else "-"


def format_measured_ops(joins: Sequence[OpJoin], top: int | None = 10, markdown: bool = False) -> str:
    """One block per workload × backend: its ``top`` calls by recoverable time (None: all), the
    join's coverage of the profile, and what did not join."""
    columns = (
        ("#", lambda r: str(r.rank), ">"),
        ("module", lambda r: clip_left(module_label(r.module, r.module_class), 28), "<"),
        ("call", lambda r: clip_left(r.call, 22), "<"),
        ("line", lambda r: elide_middle(r.source or "-", 22), "<"),
        ("per-op SOL", lambda r: format_seconds(r.sol_s), ">"),
        ("measured", lambda r: format_seconds(r.measured_s), ">"),
        ("p10–p90", lambda r: f"{format_seconds(r.p10_s)}–{format_seconds(r.p90_s)}", ">"),
        ("× SOL", lambda r: _x(r.headroom), ">"),
        ("% of SOL", lambda r: _pct(r.pct_of_sol), ">"),
        ("recoverable", lambda r: format_seconds(r.recoverable_s), ">"),
    )
    out = []
    for j in joins:
        shown = [r for r in j.rows if top is None or r.rank <= top]
        what = "device kernel time" if any(r.device_time for r in j.rows) else "host time of each call"
        title = (f"{j.workload} on {j.hardware}, {j.backend}: {len(j.rows)} call{'s' if len(j.rows) != 1 else ''} "
                 f"measured over {j.iterations} iteration{'s' if j.iterations != 1 else ''} ({what}, median)")
        if len(shown) < len(j.rows):
            title += f"; top {len(shown)} by recoverable time (--per-op all for every call)"
        out.append(("### " if markdown else "") + title)
        if markdown:
            out.append("")
        out.append(render_columns(shown, columns, markdown) if shown else "no call joined")
        if j.profile_total_s > 0:
            out.append(f"joined calls: {format_seconds(j.measured_total_s)} of the profile's "
                       f"{format_seconds(j.profile_total_s)} per iteration "
                       f"({100 * j.measured_total_s / j.profile_total_s:.3g} %)")
        violations = j.violations
        out.append(f"{len(violations)} violation(s) of a call's floor" + (":" if violations else "."))
        out += [f"  {r.call}: {r.audit}" for r in violations]
        explained = [r for r in j.rows if r.audit and not r.violation]
        if explained:
            out.append(f"{len(explained)} call(s) faster than their per-op SOL but not their floor (inputs cached "
                       "by the op before; explained):")
            out += [f"  {r.call}: {r.audit}" for r in explained]
        for title, items in (("in the profile, not the IR", j.profile_only), ("not attributed", j.not_attributed),
                             ("note", j.notes)):
            if items:
                out.append(f"{title} ({len(items)}):")
                out += [f"  {line}" for line in items]
        out.append("")
    return "\n".join(out).rstrip("\n")


def measured_rows(joins: Sequence[OpJoin]) -> list[MeasuredOpRow]:
    return [r for j in joins for r in j.rows]


def write_measured_ops_csv(joins: Sequence[OpJoin], path: str | Path) -> Path:
    """``measured_per_op.csv``: one line per joined call, the ``MeasuredOpRow`` fields as columns."""
    import pandas as pd

    pd.DataFrame([r.to_dict() for r in measured_rows(joins)], columns=list(COLUMNS)).to_csv(path, index=False)
    return Path(path)
