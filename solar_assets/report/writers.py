"""Write the report into a directory: CSV, JSON, Markdown and the roofline PNG.

The JSON file is exactly what ``solar analyze --json`` prints (a list of ReportRow dicts,
schema ``ir_schemas/report.v1.schema.json``); the CSV has the same columns; the Markdown
states its assumptions and lists the workloads that failed, with why.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from ir_schemas import REPORT_VERSION, ReportRow
from solar_assets.report.roofline import plot_roofline
from solar_assets.report.rows import rows_to_frame
from solar_assets.report.table import format_table

REPORT_STEM = "report"


def rows_as_json(rows: Sequence[ReportRow]) -> str:
    return json.dumps([r.model_dump(mode="json") for r in rows], indent=2) + "\n"


def write_json(rows: Sequence[ReportRow], path: Path) -> Path:
    path.write_text(rows_as_json(rows), encoding="utf-8")
    return path


def write_csv(rows: Sequence[ReportRow], path: Path) -> Path:
    rows_to_frame(rows).to_csv(path, index=False)
    return path


def write_markdown(rows: Sequence[ReportRow], path: Path, errors: Sequence[str] = (),
                   roofline_png: str | None = None) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# solar report",
        "",
        f"{len({r.workload for r in rows})} workload(s) on {len({r.hardware for r in rows})} hardware target(s), "
        f"{stamp}; report format v{REPORT_VERSION} (fields: `ir_schemas/REPORT.md`).",
        "",
        "Assumptions: dense peak FLOP/s at the workload's dtype and peak DRAM bandwidth from the "
        "hardware spec; 1 MAC = 2 FLOP. *Unfused*: every einsum reads its operands from and writes "
        "its output to DRAM, bound = Σ max(F/peak, B/bandwidth). *Fused*: intermediates stay on chip, "
        "bound = max(ΣF/peak, graph I/O bytes/bandwidth). *limit*: the resource that sets each bound. "
        "Only IR that reproduced the golden outputs gets bounds.",
        "",
        format_table(rows, markdown=True) if rows else "_No workload produced bounds._",
    ]
    if roofline_png:
        lines += ["", f"![roofline]({roofline_png})"]
    if errors:
        lines += ["", "## Failed", ""] + [f"- {e}" for e in errors]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_report(rows: Sequence[ReportRow], directory: str | Path, errors: Sequence[str] = (),
                 stem: str = REPORT_STEM) -> dict[str, Path]:
    """Write ``<stem>.csv``, ``.json``, ``.md`` and ``<stem>_roofline.png``; return them by kind."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    png = plot_roofline(rows, out / f"{stem}_roofline.png")
    return {
        "csv": write_csv(rows, out / f"{stem}.csv"),
        "json": write_json(rows, out / f"{stem}.json"),
        "markdown": write_markdown(rows, out / f"{stem}.md", errors, roofline_png=png.name),
        "roofline": png,
    }
