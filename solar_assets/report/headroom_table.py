"""Headroom on this host: measured time against each SOL bound, per backend, and the audit.

``format_headroom_table`` is what ``solar analyze --measure`` prints after the bounds table;
``plot_headroom`` draws measured / bound per workload, one bar per backend and mode, on a log
axis with the bound at 1: a bar below 1 beat a bound, drawn red when that bound is a true
lower bound (a violation, never clamped) and hatched when it is the unfused one (explained).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ir_schemas import ReportRow
from solar_assets.report.table import format_seconds, render_columns


def measured_rows(rows: Sequence[ReportRow]) -> list[ReportRow]:
    return [r for r in rows if r.measured_s is not None or r.measured_note]


def _x(v: float | None) -> str:
    return "–" if v is None else f"{v:.3g}×"


def _s(v: float | None) -> str:
    return "–" if v is None else format_seconds(v)


def audit_cell(r: ReportRow) -> str:
    if r.violation:
        return "VIOLATION"
    if r.measured_s is None:
        return "not measured"
    return "ok (below unfused: explained)" if "explained:" in r.violation_detail else "ok"


Column = tuple[str, Callable[[ReportRow], str], str]
HEADROOM_COLUMNS: tuple[Column, ...] = (
    ("workload", lambda r: r.workload, "<"),
    ("hardware", lambda r: r.hardware, "<"),
    ("backend", lambda r: r.measured_backend or "–", "<"),
    ("measured", lambda r: _s(r.measured_s), ">"),
    ("p90−p10", lambda r: _s(r.measured_spread_s), ">"),
    ("fastest", lambda r: _s(r.measured_min_s), ">"),
    ("SOL unfused", lambda r: format_seconds(r.sol_unfused_s), ">"),
    ("SOL fused", lambda r: format_seconds(r.sol_fused_s), ">"),
    ("SOL cache-aware", lambda r: _s(r.sol_cache_aware_s), ">"),
    ("× unfused", lambda r: _x(r.headroom_unfused), ">"),
    ("× fused", lambda r: _x(r.headroom_fused), ">"),
    ("× cache-aware", lambda r: _x(r.headroom_cache_aware), ">"),
)
BACKEND_COLUMNS: tuple[Column, ...] = (
    ("eager", lambda r: _s(r.measured_eager_s), ">"),
    ("compiled", lambda r: _s(r.measured_compile_s), ">"),
    ("× fused eager", lambda r: _x(r.headroom_fused_eager), ">"),
    ("× fused compiled", lambda r: _x(r.headroom_fused_compile), ">"),
)
AUDIT_COLUMN: Column = ("audit", audit_cell, "<")


def format_headroom_table(rows: Sequence[ReportRow], markdown: bool = False) -> str:
    """One line per measured row; per-backend columns when a second backend ran."""
    rows = measured_rows(rows)
    both = any(r.measured_eager_s is not None and r.measured_compile_s is not None for r in rows)
    columns = HEADROOM_COLUMNS + (BACKEND_COLUMNS if both else ()) + (AUDIT_COLUMN,)
    return render_columns(rows, columns, markdown)


def audit_lines(rows: Sequence[ReportRow]) -> list[str]:
    """One line per row whose runs beat some bound: the violations first, then the explained ones."""
    flagged = [r for r in rows if r.violation_detail]
    flagged.sort(key=lambda r: not r.violation)
    return [f"{r.workload} on {r.hardware}: {r.violation_detail}" for r in flagged]


# ---------------------------------------------------------------------------- the chart
def _bars(row: ReportRow) -> list[tuple[str, str, float]]:
    """(backend label, mode, measured / bound) for every backend and mode this row has."""
    backends = [(label, t) for label, t in (("eager", row.measured_eager_s), ("compiled", row.measured_compile_s))
                if t is not None]
    out = []
    for label, t in backends:
        for mode, bound in (("unfused", row.sol_unfused_s), ("fused", row.sol_fused_s),
                            ("cache-aware", row.sol_cache_aware_s)):
            if bound:
                out.append((label, mode, t / bound))
    return out


def plot_headroom(rows: Sequence[ReportRow], path: str | Path) -> Path:
    """Bar chart of measured / SOL per workload (log axis, the bound at 1) to ``path`` (PNG)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # (imported when drawn: a table needs none)
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    rows = [r for r in rows if r.measured_s is not None]
    fig = Figure(figsize=(max(6.4, 1.6 * len(rows) + 2), 4.8), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_title("Headroom on this host: measured median / SOL bound (caches flushed)")
    ax.set_ylabel("measured / bound (log; 1 = at the bound)")
    if not rows:
        ax.text(0.5, 0.5, "no measured workload", ha="center", va="center", transform=ax.transAxes)
    keys = sorted({(b, m) for r in rows for b, m, _ in _bars(r)},
                  key=lambda k: (k[0], ("unfused", "fused", "cache-aware").index(k[1])))
    width = 0.8 / max(len(keys), 1)
    colors = {"unfused": "C0", "fused": "C2", "cache-aware": "C4"}
    values = []
    for i, row in enumerate(rows):
        bars = {(b, m): v for b, m, v in _bars(row)}
        for j, key in enumerate(keys):
            if key not in bars:
                continue
            v = bars[key]
            values.append(v)
            beaten = v < 1
            true_bound = key[1] != "unfused"
            ax.bar(i - 0.4 + width * (j + 0.5), v, width, color="red" if beaten and true_bound else colors[key[1]],
                   hatch="//" if key[0] == "compiled" else ("xx" if beaten else None), edgecolor="black", lw=0.5,
                   alpha=0.9 if key[0] == "eager" else 0.6)
            ax.text(i - 0.4 + width * (j + 0.5), v, f"{v:.3g}", ha="center", va="bottom", fontsize=6, rotation=90)
    ax.axhline(1.0, color="black", lw=1)
    ax.text(len(rows) - 0.5 if rows else 0.5, 1.0, " SOL", va="bottom", ha="right", fontsize=8)
    ax.set_yscale("log")
    if values:
        ax.set_ylim(min(0.5, min(values) / 1.5), max(values) * 3)
    ax.set_xticks(range(len(rows)), [r.workload for r in rows], rotation=20, ha="right")
    handles = [Patch(facecolor=color, edgecolor="black", label=f"vs {mode}") for mode, color in colors.items()]
    if any(k[0] == "compiled" for k in keys):
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label="compiled (hatched)"))
    handles.append(Patch(facecolor="red", edgecolor="black", label="below a true lower bound (violation)"))
    ax.legend(handles=handles, fontsize="small", loc="upper left")
    ax.grid(True, axis="y", which="both", alpha=0.2)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path
