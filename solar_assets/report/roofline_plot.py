"""A roofline plot of the report: each workload at its fused and unfused arithmetic intensity.

One panel per hardware: the roof ``min(peak, bandwidth × intensity)`` and, per workload, the
FLOP/s it would attain at its SOL bound (total FLOPs / bound time) in each mode. Fusion moves
a point right (fewer DRAM bytes for the same FLOPs); a point below the roof in unfused mode
shows the per-einsum sum costs more than the whole-graph roofline would say.

With ``per_op`` rows (``solar_assets.report.per_op``) each framework op is a small triangle too:
at its own intensity (its FLOPs over its one-kernel DRAM bytes) and the FLOP/s it attains at its
unfused time (FLOPs / ``time_s``), in its workload's colour, the largest shares named. So the plot
shows which ops sit on the bandwidth slope and which under the compute roof. A measured op
(``--measure --per-op``: ``PerOpRow.measured_s``) is a cross straight below its triangle, at the
FLOP/s it attained: the vertical gap is its headroom. Ops without FLOPs
(copies, concatenations) have no place on a log axis; the legend counts them. The per-workload
plot of the ``sol_bounds`` asset always has them; the report's plot when ``solar analyze
--per-op`` asked for the breakdown (the ops that table prints).

Drawn for every ``sol_bounds`` partition, so it is drawn cheaply (issue 16: the Dagster path's
per-workload overhead, ~0.2 s a picture before, a third of it now): a ``Figure`` on its own Agg
canvas (no pyplot, nothing shared between plots); log axes whose decade ticks, labels in plain
text (``10⁻²``: no mathtext) and grid lines are a few plain artists, as is the legend
(matplotlib's tick objects, minor ticks and legend layout were most of the time); the roof as
its three corners; for the one-panel picture fixed margins (no layout solve); a palette PNG.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.markers import TICKDOWN, TICKLEFT
from matplotlib.patches import Rectangle
from matplotlib.ticker import NullLocator
from matplotlib.transforms import Affine2D, ScaledTranslation, offset_copy

from ir_schemas import PerOpRow, ReportRow
from solar_assets.png import write_png
from solar_assets.report.table import unit_peaks


TERA = 1e12  # the y axis reads in TFLOP/s, as datasheets quote peaks (not 6×10¹³ FLOP/s)
NAMED_OPS = 3  # ops named beside their point, per workload × hardware: the largest shares
TICK_PAD = 7.0  # points from the axes to a tick label: matplotlib's tick length + pad (3.5 + 3.5)
MAX_DECADE_LABELS = 8  # a wider axis labels every 2nd (3rd, ...) decade
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _attained(flops: int, seconds: float) -> float:
    """TFLOP/s attained at a bound."""
    return flops / seconds / TERA if seconds > 0 else 0.0


def op_point(op: PerOpRow) -> tuple[float, float] | None:
    """Where an op sits: (FLOP/byte, TFLOP/s attained at its unfused time); None without FLOPs
    or bytes (no place on a log axis)."""
    if op.flops <= 0 or op.bytes <= 0 or op.time_s <= 0:
        return None
    return op.flops / op.bytes, _attained(op.flops, op.time_s)


def unit_roofs(row: ReportRow) -> list[tuple[str, float]]:
    """``[("matrix bf16", 9.895e14), ("vector fp32", 6.7e13)]``: a roof per unit and dtype the
    row's work ran at, at the spec's own peak (``table.unit_peaks``); a row without them has its
    effective peak under its dtype."""
    return [(f"{unit} {dtype}", peak) for unit, dtype, peak in unit_peaks(row)] or [(row.dtype, row.peak_flop_per_s)]


def plot_roofline(rows: Sequence[ReportRow], path: str | Path, per_op: Sequence[PerOpRow] = (),
                  note: str | None = None) -> Path:
    """Draw the plot to ``path`` (PNG, Agg backend: no display needed) and return the path;
    ``per_op``: the framework ops to place as points as well (those of the rows' workloads);
    ``note``: a footnote (what the picture leaves out, ``chart_rows``)."""
    hardware = list(dict.fromkeys(r.hardware for r in rows)) or ["(no bounds)"]
    ncols = min(len(hardware), 3)
    nrows = math.ceil(len(hardware) / ncols)
    # one panel (the per-pair picture of every ``sol_bounds`` partition): fixed margins, as the
    # constrained layout's solve was half of its 0.4 s drawing (docs/dagster.md, overhead)
    single = len(hardware) == 1
    fig = Figure(figsize=(6.4 * ncols, 4.8 * nrows), dpi=100, layout=None if single else "constrained")
    if single:
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.1, top=0.93)
    FigureCanvasAgg(fig)
    for i, hw in enumerate(hardware):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        _panel(ax, hw, [r for r in rows if r.hardware == hw], [o for o in per_op if o.hardware == hw])
    if note:
        fig.supxlabel(f"({note})", fontsize="small")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_png(fig, path)  # a palette PNG: half the encoding time of savefig's
    return path


def _panel(ax, hardware: str, rows: Sequence[ReportRow], per_op: Sequence[PerOpRow] = ()) -> None:
    ax.set_title(f"SOL roofline: {hardware}", y=1.0)  # fixed: not placed around measured tick labels
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attained at SOL (TFLOP/s)")
    if not rows:
        ax.text(0.5, 0.5, "no workload produced bounds", ha="center", va="center", transform=ax.transAxes)
        return
    ax.set_xscale("log")
    ax.set_yscale("log")
    roofs = {(peak, r.dram_bytes_per_s): label for r in rows for label, peak in unit_roofs(r)}  # one per unit and dtype
    ridges = [peak / bandwidth for peak, bandwidth in roofs]
    points = {id(o): op_point(o) for o in per_op}
    intensities = [x for r in rows for x in (r.intensity_fused_flop_per_byte, r.intensity_unfused_flop_per_byte)
                   if 0 < x < math.inf] + [p[0] for p in points.values() if p]
    lo = min(intensities + ridges) / 8
    hi = max(intensities + ridges) * 8
    key: list[tuple[dict, str]] = []  # (sample's line style, label): the legend
    for (peak, bandwidth), dtype in roofs.items():
        xs = [lo, peak / bandwidth, hi]  # straight on log-log axes either side of the ridge
        ax.plot(xs, [min(peak, bandwidth * x) / TERA for x in xs], color="black", lw=1.5)
        key.append(({"color": "black", "lw": 1.5}, f"roof {dtype}: {peak / 1e12:.4g} TFLOP/s, {bandwidth / 1e12:.3g} TB/s"))
        ax.axvline(peak / bandwidth, color="grey", ls=":", lw=1)
    colors = [f"C{k % 10}" for k in range(len(rows))]
    for row, color in zip(rows, colors):
        unfused = (row.intensity_unfused_flop_per_byte, _attained(row.flops, row.sol_unfused_s))
        fused = (row.intensity_fused_flop_per_byte, _attained(row.flops, row.sol_fused_s))
        if min(*unfused, *fused) <= 0 or max(unfused[0], fused[0]) == math.inf:
            continue  # no FLOPs or no bytes: nothing to place on a log axis
        ax.plot(*zip(unfused, fused), color=color, lw=1, alpha=0.6)
        ax.plot(*unfused, marker="o", mfc="white", mec=color, ls="none")
        ax.plot(*fused, marker="o", color=color, ls="none")
        key.append(({"marker": "o", "color": color, "ls": "none"}, row.workload))
        _op_points(ax, [o for o in per_op if o.workload == row.workload], points, color)
    placed = sum(1 for p in points.values() if p)
    if per_op:
        key.append(({"marker": "^", "mfc": "none", "mec": "grey", "ls": "none"},
                    f"(triangles: {placed} framework op{'s' if placed != 1 else ''} at unfused time"
                    + (f"; {len(per_op) - placed} without FLOPs not shown)" if placed < len(per_op) else ")")))
    if any(o.measured_s for o in per_op):
        key.append(({"marker": "x", "color": "grey", "ls": "none"}, "(×: the op as measured, below its triangle)"))
    key.append(({"marker": "o", "mfc": "white", "mec": "grey", "ls": "none"}, "(hollow: unfused)"))
    _decade_axes(ax)
    _key(ax, key)


def _key(ax, entries: Sequence[tuple[dict, str]]) -> None:
    """The legend at the lower right, as plain artists (a box, one sample line and one text per
    entry, placed in points from the axes' corner): matplotlib's legend laid its boxes out again
    at every draw, a third of a one-pair picture's time. Drawn after the limits are frozen."""
    fig = ax.get_figure()
    size = FontProperties(size="small").get_size_in_points()
    pitch, pad, handle, gap, margin = 1.7 * size, 0.4 * size, 2.0 * size, 0.8 * size, 0.5 * size
    points = Affine2D().scale(1 / 72) + fig.dpi_scale_trans + ScaledTranslation(1, 0, ax.transAxes)
    texts = [ax.text(0, 0, label, fontsize=size, va="center", transform=points, zorder=5.1) for _, label in entries]
    renderer = fig.canvas.get_renderer()  # the one the picture is drawn with: the measures are reused
    width = max([t.get_window_extent(renderer).width * 72 / fig.dpi for t in texts] + [0])
    box_w, box_h = 2 * pad + handle + gap + width, 2 * pad + len(entries) * pitch
    left, bottom = -margin - box_w, margin
    ax.add_artist(Rectangle((left, bottom), box_w, box_h, transform=points, facecolor="white", edgecolor="0.8",
                            alpha=0.8, lw=1, zorder=5, clip_on=False))
    for i, ((style, _), text) in enumerate(zip(entries, texts)):
        y = bottom + box_h - pad - (i + 0.5) * pitch
        x = left + pad
        xs = [x + handle / 2] if style.get("ls") == "none" else [x, x + handle]
        ax.add_artist(Line2D(xs, [y] * len(xs), transform=points, clip_on=False, zorder=5.1, **style))
        text.set_position((x + handle + gap, y))


def _decade_axes(ax) -> None:
    """Decade ticks, their labels and grid lines drawn as a few plain artists (two marker lines,
    two line collections, one text per label) instead of matplotlib's tick objects (five
    artists each, rebuilt per draw, and most of a roofline's drawing time with the minor ticks);
    the axis labels sit beside the measured tick labels, the title above the axes."""
    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    ax.set_xlim(xlim)  # frozen: nothing drawn below moves them
    ax.set_ylim(ylim)
    fig = ax.get_figure()
    xs, ys = log_ticks(*xlim), log_ticks(*ylim)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(NullLocator())
        axis.set_minor_locator(NullLocator())
    along_x, along_y = ax.get_xaxis_transform(), ax.get_yaxis_transform()  # (data, axes), (axes, data)
    ax.vlines(xs, 0, 1, transform=along_x, colors="#b0b0b0", alpha=0.2, lw=0.8)
    ax.hlines(ys, 0, 1, transform=along_y, colors="#b0b0b0", alpha=0.2, lw=0.8)
    ax.plot(xs, [0] * len(xs), transform=along_x, marker=TICKDOWN, ms=3.5, color="black", ls="none", clip_on=False)
    ax.plot([0] * len(ys), ys, transform=along_y, marker=TICKLEFT, ms=3.5, color="black", ls="none", clip_on=False)
    below = offset_copy(along_x, fig, y=-TICK_PAD, units="points")
    left = offset_copy(along_y, fig, x=-TICK_PAD, units="points")
    xlabels = [ax.text(x, 0, power_label(x), transform=below, ha="center", va="top") for x in xs]
    ylabels = [ax.text(0, y, power_label(y), transform=left, ha="right", va="center_baseline") for y in ys]
    renderer = fig.canvas.get_renderer()  # the one savefig draws with: the measures are reused
    height = max([t.get_window_extent(renderer).height for t in xlabels] + [0]) * 72 / fig.dpi
    width = max([t.get_window_extent(renderer).width for t in ylabels] + [0]) * 72 / fig.dpi
    ax.xaxis.set_label_coords(0.5, 0, transform=offset_copy(ax.transAxes, fig, y=-TICK_PAD - height - 3,
                                                             units="points"))
    ax.yaxis.set_label_coords(0, 0.5, transform=offset_copy(ax.transAxes, fig, x=-TICK_PAD - width - 4,
                                                             units="points"))


def log_ticks(lo: float, hi: float) -> list[float]:
    """Tick values for a log axis over [lo, hi]: the decades inside it (every n-th, at most
    ``MAX_DECADE_LABELS``); 1, 2 and 5 × 10ᵏ when fewer than two decades fall inside."""
    first, last = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    if last - first >= 1:
        step = math.ceil((last - first + 1) / MAX_DECADE_LABELS)
        return [10.0 ** k for k in range(first, last + 1, step)]
    return [m * 10.0 ** k for k in range(first - 1, last + 1) for m in (1, 2, 5) if lo <= m * 10.0 ** k <= hi]


def power_label(value: float) -> str:
    """``10⁻²``, ``2×10³``: a tick label in plain text (superscript digits, no mathtext)."""
    if value <= 0:
        return ""
    k = math.floor(math.log10(value) + 1e-9)
    mantissa = round(value / 10.0 ** k, 6)
    power = f"10{str(k).translate(_SUPERSCRIPT)}"
    return power if mantissa == 1 else f"{mantissa:g}×{power}"


def _op_points(ax, ops: Sequence[PerOpRow], points: dict[int, tuple[float, float] | None], color: str) -> None:
    """One workload's ops as hollow triangles, the ``NAMED_OPS`` largest shares named."""
    from solar_assets.report.per_op import short_op

    placed = [(o, points[id(o)]) for o in ops if points.get(id(o))]
    if not placed:
        return
    xs, ys = zip(*(p for _, p in placed))
    ax.plot(xs, ys, marker="^", ms=5, mfc="none", mec=color, ls="none", alpha=0.8)
    measured = [(x, y, o.flops / o.measured_s / TERA) for o, (x, y) in placed if o.measured_s and o.measured_s > 0]
    if measured:  # --measure --per-op: the op as it ran, straight below its SOL point
        ax.vlines([m[0] for m in measured], [m[2] for m in measured], [m[1] for m in measured], colors=color,
                  lw=0.6, alpha=0.5)
        ax.plot([m[0] for m in measured], [m[2] for m in measured], marker="x", ms=5, color=color, ls="none")
    beside = offset_copy(ax.transData, ax.get_figure(), x=4, y=-8, units="points")  # a text, not an annotation:
    for op, (x, y) in sorted(placed, key=lambda e: e[0].rank)[:NAMED_OPS]:           # no arrow to lay out
        module = op.module if len(op.module) <= 24 else "…" + op.module[-23:]
        ax.text(x, y, f"{module + ' ' if module else ''}{short_op(op.op) or op.node} {100 * op.share:.0f}%",
                fontsize="x-small", color=color, transform=beside)
