"""The report as a fixed-width text table (the CLI's output) with engineering units."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ir_schemas import ReportRow
from solar_assets.formatting import format_bytes, format_count, format_seconds  # noqa: F401 (re-exported)


def _needs(x: float | None, what: str) -> str:
    """``1.03× the bandwidth``: the figure needed as a multiple of the part's own (above 1: more
    than it has; below 1: it has that much to spare)."""
    return "" if x is None else f"{x:.3g}× {what}"


def _meets(r: ReportRow) -> str:
    """``yes`` / ``no``: whether the fused bound is within the target latency."""
    if not r.target_latency_s:
        return ""
    return "yes" if r.sol_fused_s <= r.target_latency_s else "no"


def target_label(target_latency_s: float) -> str:
    """``500 Hz`` for a target that is a round rate, else ``2 ms``."""
    hz = 1.0 / target_latency_s
    return f"{hz:.4g} Hz" if abs(hz - round(hz)) < 1e-9 * hz and hz >= 1 else format_seconds(target_latency_s)


def _cache_aware_bytes(r: ReportRow) -> str:
    """The traffic, marked ``*`` when tiling-bound (above the unfused bytes) and ``?`` when unproven."""
    if r.bytes_cache_aware is None:
        return "–"
    marks = ("*" if r.cache_aware_note.startswith("tiling-bound") else "") + \
            ("?" if r.cache_aware_proven_optimal is False else "")
    return format_bytes(r.bytes_cache_aware) + marks


Column = tuple[str, Callable[[ReportRow], str], str]  # header, cell, alignment ("<" or ">")
COLUMNS: tuple[Column, ...] = (
    ("workload", lambda r: r.workload, "<"),
    ("hardware", lambda r: r.hardware, "<"),
    ("precision", lambda r: work_dtypes(r), "<"),  # not the row's dtype (the dominant one): another name
    ("IR", lambda r: r.translator + (" ✓" if r.validated else " ✗"), "<"),
    ("max abs err", lambda r: f"{r.max_abs_error:.1e}", ">"),
    ("validated at", lambda r: r.validated_size, "<"),  # "full" or the rebound constants: what the error is of
    ("MACs", lambda r: format_count(r.macs), ">"),
    ("FLOPs", lambda r: format_count(r.flops), ">"),
    ("bytes unfused", lambda r: format_bytes(r.bytes_unfused), ">"),
    ("bytes fused", lambda r: format_bytes(r.bytes_fused), ">"),
    ("SOL unfused", lambda r: format_seconds(r.sol_unfused_s), ">"),
    ("unfused limited by", lambda r: r.bound_unfused, "<"),
    ("SOL fused", lambda r: format_seconds(r.sol_fused_s), ">"),
    ("fused limited by", lambda r: r.bound_fused, "<"),
    # the best modelled schedule (not a bound: the UI and report.json name it so too), then the lower bound
    ("bytes best modelled schedule", lambda r: _cache_aware_bytes(r), ">"),
    ("best modelled schedule", lambda r: format_seconds(r.sol_cache_aware_s) if r.sol_cache_aware_s else "–", ">"),
    ("schedule limited by", lambda r: r.bound_cache_aware or "", "<"),
    ("SOL cache-aware lower bound", lambda r: format_seconds(r.sol_cache_aware_lb_s) if r.sol_cache_aware_lb_s else "–",
     ">"),  # provable (every schedule, all on-chip storage); the two before it are the best modelled schedule
    ("FLOP/B fused", lambda r: f"{r.intensity_fused_flop_per_byte:.3g}", ">"),
)
TARGET_COLUMNS: tuple[Column, ...] = (
    ("target", lambda r: format_seconds(r.target_latency_s) if r.target_latency_s else "", ">"),
    ("need FLOP/s (fused)", lambda r: format_count(r.min_flop_per_s_fused or 0, "FLOP/s"), ">"),
    ("need B/s (fused)", lambda r: format_count(r.min_bytes_per_s_fused or 0, "B/s"), ">"),
    ("meets target (fused)", lambda r: _meets(r), "<"),
    ("FLOP/s needed (fused)", lambda r: _needs(r.compute_factor_fused, "the peak"), ">"),
    ("bandwidth needed (fused)", lambda r: _needs(r.bandwidth_factor_fused, "the bandwidth"), ">"),
)


def format_table(rows: Sequence[ReportRow], markdown: bool = False, *, wide: bool = True,
                 columns: Sequence[str] | None = None) -> str:
    """The report table. ``wide`` (the default here, for the report files): every column, the
    inverse-roofline ones when any row has a target. ``wide=False``: the compact table the CLI
    prints (``COMPACT``, at most 120 characters on the shipped workloads). ``columns``: the named
    columns (``column_names()``), in that order."""
    if columns is not None:
        return render_columns(rows, select_columns(columns), markdown)
    if not wide:
        return format_compact(rows, markdown)
    columns_ = COLUMNS + (TARGET_COLUMNS if any(r.target_latency_s for r in rows) else ())
    return render_columns(rows, columns_, markdown)


def _markdown_cell(text: str) -> str:
    """A cell's text safe inside a Markdown table row: pipes escaped, line breaks as spaces."""
    return " ".join(text.replace("|", "\\|").splitlines())


def render_columns(rows: Sequence[Any], columns: Sequence[Column], markdown: bool = False) -> str:
    """Rows under ``columns`` (header, cell, alignment) as aligned text or a Markdown table: the
    one renderer every table of the report uses."""
    cells = [[cell(r) for _, cell, _ in columns] for r in rows]
    headers = [h for h, _, _ in columns]
    if markdown:
        rule = ["---" if a == "<" else "---:" for _, _, a in columns]
        body = [[_markdown_cell(c) for c in line] for line in cells]  # a workload named pipe|name stays one cell
        return "\n".join("| " + " | ".join(line) + " |" for line in [headers, rule, *body])
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)]
    def line(values: Sequence[str]) -> str:
        return "  ".join(f"{v:{a}{w}}" for v, w, (_, _, a) in zip(values, widths, columns)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, cells)])


# ---------------------------------------------------------------------------- the compact table
_SHORT_DTYPES = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16",
                 "float8_e4m3fn": "fp8e4m3", "float8_e5m2": "fp8e5m2", "int8": "int8"}


def short_dtype(dtype: str) -> str:
    return _SHORT_DTYPES.get(dtype, dtype)


_UNIT = re.compile(r"([a-z]+)(?:\.[a-z0-9]+)? [0-9.]+(?:e[+-]?\d+)? s \(([^)]*)\)")
_PEAK = re.compile(r"([a-z]+\d*[a-z0-9]*) ([0-9.]+(?:e[+-]?\d+)?) FLOP/s")


def unit_peaks(r: ReportRow) -> list[tuple[str, str, float]]:
    """``[("matrix", "bf16", 9.895e14), ("vector", "fp32", 6.7e13)]``: each unit and dtype the
    row's work ran at with the spec's own peak, busiest unit first (``peaks_fused``, read once
    here for the table and the roofline); empty when the bounds name none."""
    found = [(unit, dtype, float(peak)) for unit, inner in _UNIT.findall(r.peaks_fused or "")
             for dtype, peak in _PEAK.findall(inner)]
    return list(dict.fromkeys(found))


def work_dtypes(r: ReportRow) -> str:
    """The precisions that carry the work, from the units' peaks, busiest first: ``bf16+fp32``
    for a bf16 block whose GELU runs in fp32, ``fp8+bf16`` for a scaled fp8 GEMM, ``tf32+fp32``
    for fp32 convolutions on the tensor cores, ``tf32+fp32+…`` past two; the row's dominant dtype
    when the bounds name no peak."""
    found = list(dict.fromkeys(dtype for _, dtype, _ in unit_peaks(r)))
    if not found:
        return short_dtype(r.dtype)
    return "+".join(found[:2]) + ("+…" if len(found) > 2 else "")  # the two busiest: ``--wide`` has peaks_fused


def _validated(r: ReportRow) -> str:
    """``✓ full`` (the file's own size), ``✓ scaled`` (the constants rebound: ``--wide`` names them),
    ``✓ node-wise`` (each op group at the file's own size), ``✗``."""
    if not r.validated:
        return "✗"
    if (r.validated_size or "").startswith("node-wise"):
        return "✓ node-wise"
    return "✓ full" if r.validated_size == "full" else "✓ scaled"


LIMITER_WORDS = {"compute": "FLOP", "memory": "DRAM"}
"""The compact table's limiter beside a time: ``FLOP`` (compute throughput) or ``DRAM`` (bandwidth)."""


def _sol(time_s: float | None, limiter: str | None) -> str:
    """``4.13 µs DRAM``: a bound with the resource that limits it beside it."""
    if time_s is None or time_s != time_s:
        return "–"
    if time_s == 0:
        return "0 s"  # nothing to compute or move: a view of an input
    return f"{format_seconds(time_s)} {LIMITER_WORDS.get(limiter or '', limiter or '')}".rstrip()


def _cache_aware_sol(r: ReportRow) -> str:
    cell = _sol(r.sol_cache_aware_s, r.bound_cache_aware)
    marks = ("*" if r.cache_aware_note.startswith("tiling-bound") else "") + \
            ("?" if r.cache_aware_proven_optimal is False else "")
    return cell + marks if r.sol_cache_aware_s else cell


SOL_GROUP = "SOL time, limited by FLOP or DRAM"
COMPACT: tuple[Column, ...] = (
    ("workload", lambda r: r.workload, "<"),
    ("hardware", lambda r: r.hardware, "<"),
    ("precision", lambda r: work_dtypes(r), "<"),  # not the row's dtype (the dominant one): another name
    ("validated", _validated, "<"),
    ("MACs", lambda r: format_count(r.macs), ">"),
    ("fused bytes", lambda r: format_bytes(r.bytes_fused), ">"),
    ("unfused", lambda r: _sol(r.sol_unfused_s, r.bound_unfused), ">"),
    ("fused", lambda r: _sol(r.sol_fused_s, r.bound_fused), ">"),
    ("cache-aware", lambda r: _sol(r.sol_cache_aware_lb_s, r.bound_cache_aware_lb), ">"),  # the provable lower bound
)
"""The CLI's default columns: what a reader needs to find the bound and what sets it. The three
SOL columns sit under one group line (``SOL_GROUP``); at most 120 characters on the shipped
workloads and hardware (``*`` / ``?`` on a tiling-bound or unproven cache-aware time add two)."""
N_SOL = 3
COMPACT_WIDTH = 120  # the compact table's width, whatever the file names (report.csv has them whole)
MIN_WORKLOAD_WIDTH = 12


def elide_middle(text: str, width: int) -> str:
    """``12_Gemm_Mult…LeakyReLU``: both ends kept (a KernelBench name's number and its last op)."""
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: (keep + 1) // 2] + "…" + text[len(text) - keep // 2:]


def clip_left(text: str, width: int) -> str:
    """``…encoder.layers.3.norm1``: the end kept (a module path's innermost part)."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _target_column(rows: Sequence[ReportRow]) -> Column:
    """``meets 500 Hz``: ``yes``, or ``no: 1.03× bw`` (the larger factor the part is short by)."""
    targets = {r.target_latency_s for r in rows if r.target_latency_s}
    header = f"meets {target_label(next(iter(targets)))}" if len(targets) == 1 else "meets target"

    def cell(r: ReportRow) -> str:
        if not r.target_latency_s:
            return ""
        if r.sol_fused_s <= r.target_latency_s:
            return "yes"
        short = [(f, w) for f, w in ((r.compute_factor_fused, "peak"), (r.bandwidth_factor_fused, "bw"))
                 if f is not None and f > 1]
        f, w = max(short) if short else (0.0, "")
        return f"no: {f:.3g}× {w}" if short else "no"

    return (header, cell, "<")


def format_compact(rows: Sequence[ReportRow], markdown: bool = False) -> str:
    """``COMPACT`` and, with a target latency, whether the fused bound meets it (``meets 500 Hz``),
    under a group line naming the SOL columns (Markdown: ``SOL unfused`` … as headers instead)."""
    columns = list(COMPACT) + ([_target_column(rows)] if any(r.target_latency_s for r in rows) else [])
    first_sol = len(COMPACT) - N_SOL
    if not markdown:  # long file names are elided in the middle to keep the table in COMPACT_WIDTH
        widest = max((len(r.workload) for r in rows), default=0)
        others = len(render_columns(rows, columns[1:]).splitlines()[0]) if rows else 0
        room = max(MIN_WORKLOAD_WIDTH, COMPACT_WIDTH - others - 2)
        if widest > room:
            columns[0] = ("workload", lambda r: elide_middle(r.workload, room), "<")
    if markdown:
        columns = [(f"SOL {h}", c, a) if first_sol <= i < len(COMPACT) else (h, c, a)
                   for i, (h, c, a) in enumerate(columns)]
        return render_columns(rows, columns, markdown=True)
    text = render_columns(rows, columns)
    header, rule = text.splitlines()[:2]
    spans = [len(dashes) for dashes in rule.split("  ")]
    start = sum(spans[:first_sol]) + 2 * first_sol
    width = sum(spans[first_sol:len(COMPACT)]) + 2 * (N_SOL - 1)
    group = " " * start + f"{SOL_GROUP:-^{width}}" if len(SOL_GROUP) + 2 <= width else " " * start + SOL_GROUP
    return group.replace(f"-{SOL_GROUP}-", f" {SOL_GROUP} ") + "\n" + text


def column_names() -> dict[str, Column]:
    """Every column by name, for ``--columns``: the ``ReportRow`` field names (raw values) and the
    formatted table headers (lower case, spaces as ``_``: ``sol_fused``, ``bytes_cache-aware``)."""
    from ir_schemas import ReportRow as _Row

    named: dict[str, Column] = {}
    for field in _Row.model_fields:
        named[field] = (field, (lambda f: lambda r: with_unit(f, getattr(r, f)))(field),
                        ">" if _Row.model_fields[field].annotation in (int, float, int | None, float | None) else "<")
    for header, cell, align in (*COMPACT, *COLUMNS, *TARGET_COLUMNS):
        named.setdefault(header.lower().replace(" ", "_").replace("(", "").replace(")", ""), (header, cell, align))
    return named


def with_unit(field: str, value: Any) -> str:
    """A report field as the tables print it, with its unit (``sol_fused_s`` 8.09e-06 -> ``8.09 µs``);
    report.csv and report.json keep the raw numbers."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if "flop_per_s" in field:
        return format_count(value, "FLOP/s")
    if "bytes_per_s" in field:  # decimal, as datasheets quote bandwidth (3.35 TB/s)
        return format_count(value, "B/s")
    if field.endswith("_s"):
        return format_seconds(value)
    if field.startswith("bytes") or field.endswith("_bytes"):
        return format_bytes(value)
    if "intensity" in field:
        return f"{value:.3g} FLOP/B"
    if field in ("macs", "flops") or field.endswith(("_macs", "_flops")):
        return format_count(value)
    if "error" in field:
        return f"{value:.1e}"
    if field.startswith("headroom") or field.endswith("_factor_fused"):
        return f"{value:.3g}×"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def select_columns(names: Sequence[str]) -> list[Column]:
    """The columns named, in order; an unknown name is a usage error listing the known ones."""
    from solar_assets.errors import SolarError

    known = column_names()
    wanted = [n.strip() for n in names if n.strip()]
    missing = [n for n in wanted if n not in known]
    if missing:
        raise SolarError(f"unknown column(s) {', '.join(missing)}; known: {', '.join(known)}")
    return [known[n] for n in wanted]


def format_projection_extra(rows: Sequence[ReportRow], markdown: bool = False) -> str:
    """What the cross-platform projection adds to the report table: the fusion benefit (unfused /
    fused) and, with a target latency, the peak and bandwidth needed as multiples of each part's."""
    columns: list[Column] = [
        ("workload", lambda r: r.workload, "<"),
        ("hardware", lambda r: r.hardware, "<"),
        ("fusion × (unfused/fused)", lambda r: f"{r.sol_unfused_s / r.sol_fused_s:.3g}×" if r.sol_fused_s else "–", ">"),
    ]
    if any(r.target_latency_s for r in rows):
        columns += [_target_column(rows),
                    ("FLOP/s needed (fused)", lambda r: _needs(r.compute_factor_fused, "the peak"), ">"),
                    ("bandwidth needed (fused)", lambda r: _needs(r.bandwidth_factor_fused, "the bandwidth"), ">")]
    return render_columns(rows, columns, markdown)
