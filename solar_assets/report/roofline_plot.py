"""A roofline plot of the report: each workload at its fused and unfused arithmetic intensity.

One panel per hardware: the roof ``min(peak, bandwidth × intensity)`` and, per workload, the
FLOP/s it would attain at its SOL bound (total FLOPs / bound time) in each mode. Fusion moves
a point right (fewer DRAM bytes for the same FLOPs); a point below the roof in unfused mode
shows the per-einsum sum costs more than the whole-graph roofline would say.

With ``per_op`` rows (``solar_assets.report.per_op``) each framework op is a small triangle too:
at its own intensity (its FLOPs over its one-kernel DRAM bytes) and the FLOP/s it attains at its
unfused time (FLOPs / ``time_s``), in its workload's colour, the largest shares named. So the plot
shows which ops sit on the bandwidth slope and which under the compute roof. Ops without FLOPs
(copies, concatenations) have no place on a log axis; the legend counts them. The per-workload
plot of the ``sol_bounds`` asset always has them; the report's plot when ``solar analyze
--per-op`` asked for the breakdown (the ops that table prints).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ir_schemas import PerOpRow, ReportRow


TERA = 1e12  # the y axis reads in TFLOP/s, as datasheets quote peaks (not 6×10¹³ FLOP/s)
NAMED_OPS = 3  # ops named beside their point, per workload × hardware: the largest shares


def _attained(flops: int, seconds: float) -> float:
    """TFLOP/s attained at a bound."""
    return flops / seconds / TERA if seconds > 0 else 0.0


def op_point(op: PerOpRow) -> tuple[float, float] | None:
    """Where an op sits: (FLOP/byte, TFLOP/s attained at its unfused time); None without FLOPs
    or bytes (no place on a log axis)."""
    if op.flops <= 0 or op.bytes <= 0 or op.time_s <= 0:
        return None
    return op.flops / op.bytes, _attained(op.flops, op.time_s)


def plot_roofline(rows: Sequence[ReportRow], path: str | Path, per_op: Sequence[PerOpRow] = ()) -> Path:
    """Draw the plot to ``path`` (PNG, Agg backend: no display needed) and return the path;
    ``per_op``: the framework ops to place as points as well (those of the rows' workloads)."""
    hardware = list(dict.fromkeys(r.hardware for r in rows)) or ["(no bounds)"]
    ncols = min(len(hardware), 3)
    nrows = math.ceil(len(hardware) / ncols)
    # one panel (the per-pair picture of every ``sol_bounds`` partition): fixed margins, as the
    # constrained layout's solve was half of its 0.4 s drawing (docs/dagster.md, overhead)
    single = len(hardware) == 1
    fig = Figure(figsize=(6.4 * ncols, 4.8 * nrows), dpi=100, layout=None if single else "constrained")
    if single:
        fig.subplots_adjust(left=0.1, right=0.97, bottom=0.1, top=0.92)
    FigureCanvasAgg(fig)
    for i, hw in enumerate(hardware):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        _panel(ax, hw, [r for r in rows if r.hardware == hw], [o for o in per_op if o.hardware == hw])
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def _panel(ax, hardware: str, rows: Sequence[ReportRow], per_op: Sequence[PerOpRow] = ()) -> None:
    ax.set_title(f"SOL roofline: {hardware}")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attained at SOL (TFLOP/s)")
    if not rows:
        ax.text(0.5, 0.5, "no workload produced bounds", ha="center", va="center", transform=ax.transAxes)
        return
    roofs = {(r.peak_flop_per_s, r.dram_bytes_per_s): r.dtype for r in rows}  # one per dtype's peak
    ridges = [peak / bandwidth for peak, bandwidth in roofs]
    points = {id(o): op_point(o) for o in per_op}
    intensities = [x for r in rows for x in (r.intensity_fused_flop_per_byte, r.intensity_unfused_flop_per_byte)
                   if 0 < x < math.inf] + [p[0] for p in points.values() if p]
    lo = min(intensities + ridges) / 8
    hi = max(intensities + ridges) * 8
    xs = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    for (peak, bandwidth), dtype in roofs.items():
        ax.loglog(xs, [min(peak, bandwidth * x) / TERA for x in xs], color="black", lw=1.5,
                  label=f"roof {dtype}: {peak / 1e12:.3g} TFLOP/s, {bandwidth / 1e12:.3g} TB/s")
        ax.axvline(peak / bandwidth, color="grey", ls=":", lw=1)
    colors = [f"C{k % 10}" for k in range(len(rows))]
    for row, color in zip(rows, colors):
        unfused = (row.intensity_unfused_flop_per_byte, _attained(row.flops, row.sol_unfused_s))
        fused = (row.intensity_fused_flop_per_byte, _attained(row.flops, row.sol_fused_s))
        if min(*unfused, *fused) <= 0 or max(unfused[0], fused[0]) == math.inf:
            continue  # no FLOPs or no bytes: nothing to place on a log axis
        ax.plot(*zip(unfused, fused), color=color, lw=1, alpha=0.6)
        ax.plot(*unfused, marker="o", mfc="white", mec=color, ls="none")
        ax.plot(*fused, marker="o", color=color, ls="none", label=row.workload)
        _op_points(ax, [o for o in per_op if o.workload == row.workload], points, color)
    placed = sum(1 for p in points.values() if p)
    if per_op:
        ax.plot([], [], marker="^", mfc="none", mec="grey", ls="none",
                label=f"(triangles: {placed} framework op{'s' if placed != 1 else ''} at unfused time"
                      + (f"; {len(per_op) - placed} without FLOPs not shown)" if placed < len(per_op) else ")"))
    ax.plot([], [], marker="o", mfc="white", mec="grey", ls="none", label="(hollow: unfused)")
    ax.legend(fontsize="small", loc="lower right")
    ax.grid(True, which="both", alpha=0.2)


def _op_points(ax, ops: Sequence[PerOpRow], points: dict[int, tuple[float, float] | None], color: str) -> None:
    """One workload's ops as hollow triangles, the ``NAMED_OPS`` largest shares named."""
    from solar_assets.report.per_op import short_op

    placed = [(o, points[id(o)]) for o in ops if points.get(id(o))]
    if not placed:
        return
    xs, ys = zip(*(p for _, p in placed))
    ax.plot(xs, ys, marker="^", ms=5, mfc="none", mec=color, ls="none", alpha=0.8)
    for op, (x, y) in sorted(placed, key=lambda e: e[0].rank)[:NAMED_OPS]:
        module = op.module if len(op.module) <= 24 else "…" + op.module[-23:]
        ax.annotate(f"{module + ' ' if module else ''}{short_op(op.op) or op.node} {100 * op.share:.0f}%", (x, y),
                    fontsize="x-small",
                    color=color, xytext=(4, -8), textcoords="offset points")
