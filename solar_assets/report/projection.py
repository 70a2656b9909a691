"""Cross-platform projection: one workload's bounds on every hardware, side by side.

For each workload × hardware: the SOL bounds, the fusion benefit (unfused / fused: what keeping
every intermediate on chip would win on that part), and, with a target latency (``--target-hz
500`` = 2 ms), the factor by which that part's peak FLOP/s and DRAM bandwidth would have to grow
to meet it (below 1: it has that much to spare). Built from report rows alone, so any set of
``--hardware`` names projects; ``--project`` asks for every shipped spec.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ir_schemas import ReportRow
from solar_assets.report.table import format_seconds, render_columns

PROJECTION_COLUMNS = (
    "workload", "hardware", "dtype", "sol_unfused_s", "sol_fused_s", "sol_cache_aware_s", "fusion_benefit",
    "bound_fused", "target_latency_s", "meets_target_fused", "compute_factor", "bandwidth_factor_fused",
    "bandwidth_factor_unfused",
)


def projection_frame(rows: Sequence[ReportRow]) -> pd.DataFrame:
    """One row per workload × hardware with the columns above (factors None without a target)."""
    records = []
    for r in rows:
        target = r.target_latency_s
        compute = r.compute_factor_fused
        bw_fused = r.bandwidth_factor_fused
        bw_unfused = (r.min_bytes_per_s_unfused / r.dram_bytes_per_s
                      if r.min_bytes_per_s_unfused is not None else None)
        records.append({
            "workload": r.workload, "hardware": r.hardware, "dtype": r.dtype,
            "sol_unfused_s": r.sol_unfused_s, "sol_fused_s": r.sol_fused_s, "sol_cache_aware_s": r.sol_cache_aware_s,
            "fusion_benefit": r.sol_unfused_s / r.sol_fused_s if r.sol_fused_s > 0 else None,
            "bound_fused": r.bound_fused, "target_latency_s": target,
            "meets_target_fused": (r.sol_fused_s <= target) if target else None,
            "compute_factor": compute, "bandwidth_factor_fused": bw_fused, "bandwidth_factor_unfused": bw_unfused,
        })
    return pd.DataFrame(records, columns=list(PROJECTION_COLUMNS))


def _x(v) -> str:
    return "–" if v is None or pd.isna(v) else f"{v:.3g}×"


def format_projection(rows: Sequence[ReportRow], markdown: bool = False) -> str:
    """The projection as a text (or Markdown) table."""
    frame = projection_frame(rows)
    target = any(r.target_latency_s for r in rows)
    headers = ["workload", "hardware", "SOL unfused", "SOL fused", "SOL cache-aware", "fusion ×", "limit"]
    if target:
        headers += ["target", "meets (fused)", "× peak", "× bw fused", "× bw unfused"]
    cells = []
    for _, p in frame.iterrows():
        line = [p.workload, p.hardware, format_seconds(p.sol_unfused_s), format_seconds(p.sol_fused_s),
                "–" if pd.isna(p.sol_cache_aware_s) else format_seconds(p.sol_cache_aware_s),
                _x(p.fusion_benefit), p.bound_fused]
        if target:
            line += ["–" if pd.isna(p.target_latency_s) else format_seconds(p.target_latency_s),
                     {True: "yes", False: "no"}.get(p.meets_target_fused, "–"),
                     _x(p.compute_factor), _x(p.bandwidth_factor_fused), _x(p.bandwidth_factor_unfused)]
        cells.append([str(c) for c in line])
    left = ("workload", "hardware", "limit", "meets (fused)")
    columns = [(h, (lambda c, i=i: c[i]), "<" if h in left else ">") for i, h in enumerate(headers)]
    return render_columns(cells, columns, markdown)


MAX_WIDTH_IN = 32.0  # a wider picture is read by no one (``chart_rows`` picks what it shows)


def plot_projection(rows: Sequence[ReportRow], path: str | Path, note: str | None = None) -> Path:
    """Two panels: the fused SOL per workload on each hardware (bars; unfused as a dash, the
    target latency as a line), and the fusion benefit per workload and hardware; ``note``: a
    footnote (what the picture leaves out, ``chart_rows``)."""
    hardware = list(dict.fromkeys(r.hardware for r in rows))
    workloads = list(dict.fromkeys(r.workload for r in rows))
    by_key = {(r.workload, r.hardware): r for r in rows}
    fig = Figure(figsize=(min(MAX_WIDTH_IN, max(8.0, 1.3 * len(workloads) * max(len(hardware), 1) / 3 + 3)), 8.0), dpi=100,
                 layout="constrained")
    FigureCanvasAgg(fig)
    top, bottom = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    width = 0.8 / max(len(hardware), 1)
    for j, hw in enumerate(hardware):
        xs, fused, unfused, benefit = [], [], [], []
        for i, w in enumerate(workloads):
            r = by_key.get((w, hw))
            if r is None or r.sol_fused_s <= 0:
                continue
            xs.append(i - 0.4 + width * (j + 0.5))
            fused.append(r.sol_fused_s)
            unfused.append(r.sol_unfused_s)
            benefit.append(r.sol_unfused_s / r.sol_fused_s)
        color = f"C{j % 10}"
        top.bar(xs, fused, width, color=color, label=hw)
        top.plot(xs, unfused, ls="none", marker="_", markersize=10, mew=2, color="black")
        bottom.bar(xs, benefit, width, color=color, label=hw)
    targets = {r.target_latency_s for r in rows if r.target_latency_s}
    for t in sorted(targets):
        top.axhline(t, color="red", ls="--", lw=1, label=f"target {format_seconds(t)} ({1 / t:.4g} Hz)")
    top.plot([], [], ls="none", marker="_", markersize=10, mew=2, color="black", label="unfused bound")
    top.set_yscale("log")
    top.set_ylabel("SOL fused (s, log)")
    top.set_title("Cross-platform projection: SOL per workload and hardware")
    bottom.set_ylabel("fusion benefit (unfused / fused)")
    bottom.axhline(1.0, color="black", lw=0.8)
    for ax in (top, bottom):
        ax.set_xticks(range(len(workloads)), workloads, rotation=20, ha="right")
        ax.grid(True, axis="y", which="both", alpha=0.2)
    top.legend(fontsize="x-small", ncols=2, loc="upper left")
    if note:
        fig.supxlabel(f"({note})", fontsize="small")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path
