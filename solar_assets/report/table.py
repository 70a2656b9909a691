"""The report as a fixed-width text table (the CLI's output) with engineering units."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ir_schemas import ReportRow

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def format_count(x: float, unit: str = "") -> str:
    """Decimal SI prefix, 3 significant digits: ``1.07 G`` (MACs, FLOP/s, bytes/s)."""
    for scale, prefix in _PREFIXES:
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}".rstrip()
    return f"{x:.3g} {unit}".rstrip()


def format_bytes(n: float) -> str:
    """Binary prefixes, as memory sizes are read: ``12.0 MiB``."""
    for scale, prefix in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {prefix}"
    return f"{n:.0f} B"


def format_seconds(t: float) -> str:
    """``32.1 µs``, ``4.2 ms``, ``1.5 s``."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(t) >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def _factor(x: float | None) -> str:
    return "" if x is None else f"{x:.3g}×"


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
    ("dtype", lambda r: r.dtype, "<"),
    ("IR", lambda r: r.translator + (" ✓" if r.validated else " ✗"), "<"),
    ("max abs err", lambda r: f"{r.max_abs_error:.1e}", ">"),
    ("validated at", lambda r: r.validated_size, "<"),  # "full" or the rebound constants: what the error is of
    ("MACs", lambda r: format_count(r.macs), ">"),
    ("FLOPs", lambda r: format_count(r.flops), ">"),
    ("bytes unfused", lambda r: format_bytes(r.bytes_unfused), ">"),
    ("bytes fused", lambda r: format_bytes(r.bytes_fused), ">"),
    ("SOL unfused", lambda r: format_seconds(r.sol_unfused_s), ">"),
    ("limit", lambda r: r.bound_unfused, "<"),
    ("SOL fused", lambda r: format_seconds(r.sol_fused_s), ">"),
    ("limit", lambda r: r.bound_fused, "<"),
    ("bytes cache-aware", lambda r: _cache_aware_bytes(r), ">"),
    ("SOL cache-aware", lambda r: format_seconds(r.sol_cache_aware_s) if r.sol_cache_aware_s else "–", ">"),
    ("limit", lambda r: r.bound_cache_aware or "", "<"),
    ("SOL cache-aware lower bound", lambda r: format_seconds(r.sol_cache_aware_lb_s) if r.sol_cache_aware_lb_s else "–",
     ">"),  # provable (every schedule, all on-chip storage); the two before it are the best modelled schedule
    ("FLOP/B fused", lambda r: f"{r.intensity_fused_flop_per_byte:.3g}", ">"),
)
TARGET_COLUMNS: tuple[Column, ...] = (
    ("target", lambda r: format_seconds(r.target_latency_s) if r.target_latency_s else "", ">"),
    ("need FLOP/s (fused)", lambda r: format_count(r.min_flop_per_s_fused or 0, "FLOP/s"), ">"),
    ("need B/s (fused)", lambda r: format_count(r.min_bytes_per_s_fused or 0, "B/s"), ">"),
    ("× peak", lambda r: _factor(r.compute_factor_fused), ">"),
    ("× bw", lambda r: _factor(r.bandwidth_factor_fused), ">"),
)


def format_table(rows: Sequence[ReportRow], markdown: bool = False) -> str:
    """One line per row; the inverse-roofline columns appear when any row has a target."""
    columns = COLUMNS + (TARGET_COLUMNS if any(r.target_latency_s for r in rows) else ())
    return render_columns(rows, columns, markdown)


def render_columns(rows: Sequence[Any], columns: Sequence[Column], markdown: bool = False) -> str:
    """Rows under ``columns`` (header, cell, alignment) as aligned text or a Markdown table: the
    one renderer every table of the report uses."""
    cells = [[cell(r) for _, cell, _ in columns] for r in rows]
    headers = [h for h, _, _ in columns]
    if markdown:
        rule = ["---" if a == "<" else "---:" for _, _, a in columns]
        return "\n".join("| " + " | ".join(line) + " |" for line in [headers, rule, *cells])
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)]
    def line(values: Sequence[str]) -> str:
        return "  ".join(f"{v:{a}{w}}" for v, w, (_, _, a) in zip(values, widths, columns)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, cells)])
