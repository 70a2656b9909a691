"""Write the report into a directory: CSV, JSON, Markdown and the roofline PNG.

The JSON file is the report document (``ir_schemas/report_document.py``): schema, solar version,
time, the rows (ReportRow dicts, ``report.v1.schema.json``), the failures and the per-op
breakdown: ``solar analyze --json`` prints the same document; the CSV has the rows' columns; the Markdown
states its assumptions and lists the workloads that failed, with why. JSON has no inf or NaN:
a non-finite figure is written as null and named in the row's ``nonfinite_note``.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ir_schemas import REPORT_SCHEMA, REPORT_VERSION, Failure, ModuleRow, PerOpRow, ReportDocument, ReportRow
from solar_assets.report.chart_rows import MAX_ROOFLINE_WORKLOADS, charted_rows
from solar_assets.report.failures import failure_from_error
from solar_assets.report.row_json import finite_row, rows_as_json  # noqa: F401 (re-exported)
from solar_assets.report.rows import rows_to_frame
from solar_assets.report.table import format_table

REPORT_STEM = "report"


def write_json(rows: Sequence[ReportRow], path: Path) -> Path:
    path.write_text(rows_as_json(rows), encoding="utf-8")
    return path


def write_csv(rows: Sequence[ReportRow], path: Path) -> Path:
    rows_to_frame(rows).to_csv(path, index=False)
    return path


def write_markdown(rows: Sequence[ReportRow], path: Path, errors: Sequence[str] = (),
                   roofline_png: str | None = None, charts: Mapping[str, str] | None = None) -> Path:
    """The report as Markdown; ``charts`` (kind -> file name) adds the headroom and projection
    sections with their pictures."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# solar report",
        "",
        f"{len({r.workload for r in rows})} workload(s) on {len({r.hardware for r in rows})} hardware target(s), "
        f"{stamp}; report format v{REPORT_VERSION} (fields: `ir_schemas/REPORT.md`).",
        "",
        "Assumptions: dense peaks and peak DRAM bandwidth from the hardware spec; 1 MAC = 2 FLOP. Each "
        "node runs on its own unit: contractions on the matrix (tensor-core) peak of their operand dtype, "
        "fp32 ones as the fp32-math policy says (" + _fp32_policies(rows) + "), everything else on the "
        "vector peak of its dtype; units run concurrently, so compute time is the busiest unit's (row "
        "fields `compute_unit`, `peaks_fused`, `peaks_unfused`). *Unfused*: one DRAM round trip per "
        "framework op (per IR kernel where the IR names no origin op), bound = Σ max(compute, B/bandwidth). "
        "*Fused*: intermediates stay on chip, bound = max(busiest unit's time, graph I/O bytes/bandwidth). "
        "*Cache-aware*: the best modelled schedule (achievable, an upper bound on the optimum): the least DRAM "
        "traffic over modelled tilings and fused segments with the hardware's L2 (Pyomo + GLPK ILP), time = "
        "max(busiest unit's time, that traffic/bandwidth); `*` marks a tiling-bound row (the buffer forces more "
        "traffic than the unfused bytes), `?` one GLPK did not prove optimal. *Cache-aware lower bound* "
        "(`bytes_cache_aware_lb` in the CSV / JSON): the provable lower bound for every schedule with all "
        "on-chip storage. *limit*: the resource that sets each "
        "bound. Only IR that reproduced the golden outputs gets bounds.",
        "",
        format_table(rows, markdown=True) if rows else "_No workload produced bounds._",
    ]
    if roofline_png:
        lines += ["", f"![roofline]({roofline_png})"]
    notes = [f"- {r.workload} on {r.hardware}: {r.cache_aware_note}" for r in rows if r.cache_aware_note]
    if notes:
        lines += ["", "## Cache-aware notes", "", *notes]
    warnings = [f"- {r.workload} on {r.hardware}: {r.notes}" for r in rows if r.notes]
    if warnings:
        lines += ["", "## Warnings", "", *warnings]
    from solar_assets.paths import file_stem

    slopes = sorted({r.workload for r in rows if (path.parent / "skislope" / f"{file_stem(r.workload)}.png").is_file()})
    if slopes:
        lines += ["", "## Ski-slopes (minimum DRAM traffic against on-chip buffer capacity)", "",
                  *(f"- {w}: [CSV](skislope/{file_stem(w)}.csv), ![{w}](skislope/{file_stem(w)}.png)"
                    for w in slopes)]
    lines += _measured_sections(rows, charts or {})
    if errors:
        lines += ["", "## Failed", ""] + [f"- {e}" for e in errors]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _fp32_policies(rows: Sequence[ReportRow]) -> str:
    policies = sorted({r.fp32_math for r in rows if r.fp32_math})
    return "; ".join(policies) if policies else "auto"


def write_report(rows: Sequence[ReportRow], directory: str | Path, errors: Sequence[str] = (),
                 stem: str = REPORT_STEM, *, failures: Sequence[Failure] | None = None,
                 per_op: Sequence[PerOpRow] | None = None,
                 roofline_ops: Sequence[PerOpRow] = (), measured_ops: Sequence = ()) -> dict[str, Path]:
    """Write ``<stem>.csv``, ``.json``, ``.md`` and ``<stem>_roofline.png`` (plus ``_headroom.png`` when
    rows are measured, ``_projection.png`` / ``_projection.csv`` for several hardware); return them by kind.
    ``<stem>.json`` is the report document (``ir_schemas.ReportDocument``: rows, failures, per-op rows).
    ``failures`` (structured; else made from ``errors``) and ``per_op`` also write ``failures.csv`` and
    ``per_op.csv`` when given; ``roofline_ops``: framework ops the roofline places as points too."""
    listed = list(failures) if failures is not None else [failure_from_error(e) for e in errors]
    if failures is not None:
        errors = [*errors, *(f"{f.reason} ({f.status} at {f.stage})" if f.stage else f.reason for f in failures)]
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    png = _roofline(rows, out / f"{stem}_roofline.png", roofline_ops)
    charts = _write_charts(rows, out, stem)
    from solar_assets.report.per_module import module_rollup

    per_module = module_rollup(per_op or ())  # once: report.json and per_module.csv
    written = {
        "csv": write_csv(rows, out / f"{stem}.csv"),
        "json": write_document(rows, out / f"{stem}.json", listed, per_op or (), measured_ops, per_module),
        **_write_tables(out, failures, per_op, per_module),
        "markdown": write_markdown(rows, out / f"{stem}.md", errors, roofline_png=png.name,
                                   charts={k: p.name for k, p in charts.items() if p.suffix == ".png"}),
        "roofline": png,
        **charts,
    }
    if per_op:
        _append_per_op(written["markdown"], per_op)
    if measured_ops:  # measure.op_join.OpJoin: the per-op headroom (--measure --per-op)
        from solar_assets.report.measured_ops import MEASURED_OPS_STEM, format_measured_ops, write_measured_ops_csv

        written["measured_per_op"] = write_measured_ops_csv(measured_ops, out / f"{MEASURED_OPS_STEM}.csv")
        with written["markdown"].open("a", encoding="utf-8") as f:
            f.write("\n## Per-op headroom (measured median / per-op SOL)\n\n"
                    + format_measured_ops(measured_ops, top=None, markdown=True) + "\n")
    return written


_DRAWN: dict[str, Path] = {}
"""Rooflines this process drew, by what they show: ``solar analyze`` on Dagster writes the report
twice (the ``headroom_report`` asset's files and the run directory), and the second picture of the
same rows is the first one's bytes (~0.4 s of a call)."""


def _roofline(rows: Sequence[ReportRow], path: Path, ops: Sequence[PerOpRow]) -> Path:
    from solar_assets.report.roofline_plot import plot_roofline  # matplotlib: 0.7 s, for a call that draws

    drawn, note = charted_rows(rows, MAX_ROOFLINE_WORKLOADS)
    kept = {r.workload for r in drawn}
    drawn_ops = [o for o in ops if o.workload in kept]
    return _drawn_once("roofline", [drawn, drawn_ops], path,
                       lambda: plot_roofline(drawn, path, per_op=drawn_ops, note=note))


def _drawn_once(kind: str, shown: Sequence[Sequence[Any]], path: Path, draw: Callable[[], Path]) -> Path:
    """``draw()``, or a copy of the picture this process drew of the same values (``_DRAWN``)."""
    import hashlib
    import shutil

    key = kind + hashlib.sha256(json.dumps([[v.model_dump_json() for v in part] for part in shown])
                                .encode()).hexdigest()
    earlier = _DRAWN.get(key)
    if earlier is not None and earlier != path and earlier.is_file():
        shutil.copyfile(earlier, path)
        return path
    _DRAWN[key] = draw()
    return _DRAWN[key]


def _write_charts(rows: Sequence[ReportRow], out: Path, stem: str) -> dict[str, Path]:
    """The headroom chart (rows measured on this host) and the projection CSV and chart (rows on
    more than one hardware); a chart this report does not have is removed, so that no picture
    of an earlier run is taken for this one's."""
    from solar_assets.report.headroom_table import plot_headroom
    from solar_assets.report.projection import plot_projection, projection_frame

    written: dict[str, Path] = {}
    targets = {"headroom": out / f"{stem}_headroom.png", "projection": out / f"{stem}_projection.png",
               "projection_csv": out / f"{stem}_projection.csv"}
    if any(r.measured_s is not None for r in rows):
        written["headroom"] = plot_headroom(rows, targets["headroom"])
    if len({r.hardware for r in rows}) > 1:
        drawn, note = charted_rows(rows)
        written["projection"] = _drawn_once("projection", [drawn], targets["projection"],
                                            lambda: plot_projection(drawn, targets["projection"], note=note))
        projection_frame(rows).to_csv(targets["projection_csv"], index=False)
        written["projection_csv"] = targets["projection_csv"]
    for kind, path in targets.items():
        if kind not in written:
            path.unlink(missing_ok=True)
    return written


def _measured_sections(rows: Sequence[ReportRow], charts: Mapping[str, str]) -> list[str]:
    from solar_assets.report.headroom_table import audit_lines, format_headroom_table, measured_rows
    from solar_assets.report.projection import format_projection

    lines: list[str] = []
    if measured_rows(rows):
        audit = audit_lines(rows)
        lines += ["", "## Headroom on this host", "",
                  "Measured: the workload run on this machine, caches flushed (a buffer larger than every "
                  "cache read and written) before each run, after warm-up; median of the runs, p10–p90 "
                  "spread. Headroom = measured median / bound. The audit compares each backend's fastest run "
                  "with the bounds: below the fused bound or the cache-aware lower bound (provable lower bounds) "
                  "is a violation; below the unfused bound (it charges every IR kernel its own DRAM round trip) "
                  "or the best modelled cache-aware schedule (achievable) is explained.",
                  "", format_headroom_table(rows, markdown=True), "",
                  f"Violations: {sum(r.violation for r in rows)}."]
        lines += [""] + [f"- {line}" for line in audit] if audit else []
        if "headroom" in charts:
            lines += ["", f"![headroom]({charts['headroom']})"]
    if len({r.hardware for r in rows}) > 1:
        lines += ["", "## Cross-platform projection", "",
                  "The bounds of each workload on each hardware; fusion × = unfused / fused. With a target "
                  "latency, × peak and × bw are the factors by which the part's peak FLOP/s and DRAM "
                  "bandwidth would have to grow to meet it (below 1: to spare).", "",
                  format_projection(rows, markdown=True)]
        if "projection" in charts:
            lines += ["", f"![projection]({charts['projection']})"]
    return lines


def report_pngs(directory: str | Path | None = None, stem: str = REPORT_STEM) -> dict[str, Path]:
    """The report's pictures that exist in ``directory`` (default ``$SOLAR_HOME/reports``), by kind
    (``roofline``, ``headroom``, ``projection``): for the Dagster UI and anything else that shows them."""
    if directory is None:
        from solar_assets.paths import reports_dir

        directory = reports_dir()
    out = Path(directory)
    found = {kind: out / f"{stem}_{kind}.png" for kind in ("roofline", "headroom", "projection")}
    return {kind: path for kind, path in found.items() if path.is_file()}


# ---------------------------------------------------------------------------- the report document
def report_document(rows: Sequence[ReportRow], failures: Sequence[Failure] = (),
                    per_op: Sequence[PerOpRow] = (), measured_ops: Sequence = (),
                    per_module: Sequence[ModuleRow] | None = None) -> dict:
    """``report.json`` as a dict: ``{"schema", "solar_version", "created", "rows", "failures", "per_op",
    "per_module"}`` (the per-op rows rolled up by module, every depth: ``per_module`` when the caller
    has it). The rows are serialised as ``rows_as_json`` writes them (what ``--json`` prints)."""
    from solar_assets.report.per_module import module_rollup
    from solar_assets.version import __version__

    return {
        "schema": REPORT_SCHEMA,
        "solar_version": __version__,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rows": [finite_row(r) for r in rows],
        "failures": [f.model_dump(mode="json") for f in failures],
        "per_op": [r.model_dump(mode="json") for r in per_op],
        "per_module": [r.model_dump(mode="json") for r in (module_rollup(per_op) if per_module is None else per_module)],
        "measured_per_op": [r.model_dump(mode="json") for j in measured_ops for r in j.rows],  # measure.op_join.OpJoin
    }


def document_as_json(rows: Sequence[ReportRow], failures: Sequence[Failure] = (),
                     per_op: Sequence[PerOpRow] = (), measured_ops: Sequence = (),
                     per_module: Sequence[ModuleRow] | None = None) -> str:
    """The report document as ``report.json`` holds it (what ``solar analyze --json`` prints): each
    top-level field on a line of its own, a list one element a line. ``json.dumps(indent=2)`` takes
    the pure-Python encoder: 6.7 s for KernelBench's 1,620 rows and their per-op rows, written
    twice a call; each element here goes through the C encoder."""
    return _one_element_a_line(report_document(rows, failures, per_op, measured_ops, per_module))


def _one_element_a_line(document: Mapping[str, Any]) -> str:
    fields = []
    for key, value in document.items():
        if isinstance(value, list) and value:
            inner = ",\n".join("    " + json.dumps(item) for item in value)
            fields.append(f"  {json.dumps(key)}: [\n{inner}\n  ]")
        else:
            fields.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(fields) + "\n}\n"


def write_document(rows: Sequence[ReportRow], path: Path, failures: Sequence[Failure] = (),
                   per_op: Sequence[PerOpRow] = (), measured_ops: Sequence = (),
                   per_module: Sequence[ModuleRow] | None = None) -> Path:
    path.write_text(document_as_json(rows, failures, per_op, measured_ops, per_module), encoding="utf-8")
    return path


def read_report(path: str | Path) -> ReportDocument:
    """A ``report.json``: the document, or (written before v2) a bare list of rows."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, list):
        return ReportDocument(schema="solar.report.v1", solar_version="unknown", created="",
                              rows=[ReportRow.model_validate(d) for d in data])
    return ReportDocument.model_validate(data)


FAILURE_COLUMNS = tuple(Failure.model_fields)


def _write_tables(out: Path, failures: Sequence[Failure] | None, per_op: Sequence[PerOpRow] | None,
                  per_module: Sequence[ModuleRow]) -> dict[str, Path]:
    import pandas as pd

    from solar_assets.report.per_op import PER_OP_STEM, write_per_op_csv

    written: dict[str, Path] = {}
    if failures is not None:
        written["failures"] = out / "failures.csv"
        pd.DataFrame([f.model_dump() for f in failures], columns=list(FAILURE_COLUMNS)).to_csv(
            written["failures"], index=False)
    if per_op is not None:
        from solar_assets.report.per_module import PER_MODULE_STEM, write_per_module_csv

        written["per_op"] = write_per_op_csv(per_op, out / f"{PER_OP_STEM}.csv")
        written["per_module"] = write_per_module_csv(per_module, out / f"{PER_MODULE_STEM}.csv")
    return written


def _append_per_op(markdown: Path, per_op: Sequence[PerOpRow], top: int = 10) -> None:
    """The per-op section of ``report.md``: the ``top`` ops of each workload × hardware."""
    from solar_assets.report.per_op import format_per_op

    text = ("\n## Per-op breakdown\n\nEach framework op as one eager kernel (its boundary tensors through "
            "DRAM once), its unfused roofline time and share; every op is in `per_op.csv`.\n\n"
            + format_per_op(per_op, top=top, markdown=True) + "\n")
    with open(markdown, "a", encoding="utf-8") as f:
        f.write(text)
