"""The ski-slope: minimum DRAM traffic against buffer capacity, as rows, CSV and a PNG.

Capacities are log-spaced from 64 KiB to 1 GiB. Every point reuses the same frontiers (they do
not depend on the capacity); only the selection ILP runs per point. Traffic never rises with
capacity: a mapping that fits a buffer fits every larger one.
"""
from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from solar_assets.bounds.cache_aware.problem import Problem
from solar_assets.bounds.cache_aware.solve import CacheAwareSolver, Options, default_solver, solve_subject

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


@dataclass(frozen=True)
class SkiSlopeRow:
    capacity_bytes: int
    bytes_cache_aware: int  # fusion and tiling chosen together
    bytes_unfused_tiled: int | None  # every einsum on its own at this capacity (None: one does not fit)
    bytes_fused: int  # graph inputs, weights and outputs once (infinite buffer); 0 when unknown
    bytes_unfused: int  # every einsum's operands and output once (infinite buffer, no fusion)
    segments: int  # segments chosen (fewer than einsums: something is fused)
    proven_optimal: bool
    solve_seconds: float


@dataclass(frozen=True)
class SkiSlope:
    workload: str
    rows: tuple[SkiSlopeRow, ...]

    def write_csv(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=[f.name for f in fields(SkiSlopeRow)])
            w.writeheader()
            for row in self.rows:
                w.writerow(asdict(row))
        return path

    def write_png(self, path: str | Path, marks: Mapping[str, int] | None = None) -> Path:
        """Log-log plot; ``marks`` draws a vertical line per hardware buffer (name -> bytes)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter, NullFormatter

        from solar_assets.formatting import format_bytes

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig = Figure(figsize=(7, 4.5), dpi=110)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        def mib(b: int | None) -> float:  # a log axis shows neither 0 nor None
            return b / MIB if b else float("nan")

        cap = [r.capacity_bytes / MIB for r in self.rows]
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.step(cap, [mib(r.bytes_cache_aware) for r in self.rows], where="post", lw=2,
                label="cache-aware (fusion + tiling)")
        ax.step(cap, [mib(r.bytes_unfused_tiled) for r in self.rows], where="post", ls="--",
                label="tiled, no fusion")
        if self.rows and self.rows[0].bytes_unfused:
            ax.axhline(mib(self.rows[0].bytes_unfused), color="grey", ls=":", label=f"unfused (∞ buffer): {format_bytes(self.rows[0].bytes_unfused)}")
        if self.rows and self.rows[0].bytes_fused:
            ax.axhline(mib(self.rows[0].bytes_fused), color="black", ls="-.", label=f"fused (∞ buffer): {format_bytes(self.rows[0].bytes_fused)}")
        by_size: dict[int, list[str]] = {}
        for name, b in (marks or {}).items():
            by_size.setdefault(int(b), []).append(name)
        for b, names in sorted(by_size.items()):
            ax.axvline(b / MIB, color="tab:red", alpha=0.3)
            ax.text(b / MIB, 0.98, ", ".join(sorted(names)), rotation=90, va="top", ha="right", fontsize=7,
                    transform=ax.get_xaxis_transform())  # x in MiB, y as a fraction of the axes
        for axis in (ax.xaxis, ax.yaxis):  # ticks read as bytes do everywhere else: 64 KiB, 1.5 GiB
            axis.set_major_formatter(FuncFormatter(lambda v, _pos: format_bytes(v * MIB)))
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("on-chip buffer")
        ax.set_ylabel("minimum DRAM traffic")
        ax.set_title(f"{self.workload}: DRAM traffic vs buffer capacity", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        # beside the axes, not on them: inside, "best" still lands on the flat fused/unfused lines
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        fig.savefig(path, format="png", bbox_inches="tight")
        return path


def capacity_sweep(lo_bytes: int = 64 * KIB, hi_bytes: int = GIB, per_octave: int = 2) -> list[int]:
    """Log-spaced capacities from ``lo_bytes`` to ``hi_bytes`` inclusive, ``per_octave`` per doubling."""
    out, k = [], 0
    while True:
        c = int(round(lo_bytes * 2 ** (k / per_octave)))
        if c > hi_bytes:
            break
        out.append(c)
        k += 1
    if out[-1] != hi_bytes:
        out.append(hi_bytes)
    return out


def ski_slope(subject: Any, capacities: Sequence[int] | None = None, *, solver: CacheAwareSolver | None = None,
              **options: Any) -> SkiSlope:
    """The sweep for an EinsumGraph (or a Problem); ``options`` as for ``cache_aware_traffic``."""
    solver = solver or default_solver(Options(**options))
    name = subject.name if isinstance(subject, Problem) else subject.program.name
    fused = int(getattr(subject, "io_bytes", 0))
    rows = []
    for c in capacities or capacity_sweep():
        r = solve_subject(solver, subject, c)
        rows.append(SkiSlopeRow(c, r.bytes, r.unfused_tiled_bytes, fused, r.unfused_bytes, len(r.segments),
                                r.proven_optimal, r.solve_seconds))
    return SkiSlope(name, tuple(rows))
