"""The metadata a person reads in the Dagster UI, as plain data: every figure with its unit, code and
pictures whole. No Dagster here: the workers build it (``dagster_defs.metadata.to_dagster`` converts).

Dagster 1.13 shows a float entry as the float's ``repr`` (``0.000032051994746268655``) and an int
as its digits (``67000000000000``), so the assets attach figures through these helpers instead:

* **Text with units** for reading, from the report's own formatters (``solar_assets.report.table``,
  so the UI, the CLI table and the report files print a figure the same way): ``32.1 µs``,
  ``1.07 G`` MACs, ``12 MiB (12,582,912 B)``, ``67 TFLOP/s``, ``3.35 TB/s``.
* **A few numbers for plotting**: Dagster's *Plots* tab charts numeric entries across
  materialisations, so each asset keeps its key figures (the SOL times, the measured median, the
  MAC and FLOP counts) as numbers as well: counts as exact ints under their own name (``MACs``),
  times as floats in a unit fixed in the label (``SOL fused [µs]``), rounded to ``PLOT_DIGITS``
  significant digits (the model is not more precise than that, and no 17-digit float shows).
* **Code and pictures** as Markdown, which Dagster renders whole: the IR in a fenced block, its
  line breaks kept (``MetadataValue.text`` would run the lines together), lines longer than
  ``CODE_WRAP_COLUMNS`` (120) continued on the next line (``↪``) so that none is cut at the dialog's
  edge; pictures as Markdown images with ``data:`` URIs (no file server needed). Dagster 1.13
  shows Markdown of 1000 characters or more behind a "[Show Markdown]" link, in a dialog as wide
  as its content (up to the window): there the IR and the pictures appear, uncut
  (tests/test_browser_ui.py measures it). Shorter Markdown (the bounds table) is inline.
* **Tables** (``MetadataValue.table``, rendered inline) for row-shaped data: the per-op breakdown
  on ``sol_bounds``, the validation checks; floats rounded as for plots.
"""
from __future__ import annotations

import base64
import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ir_schemas import PerOpRow
from solar_assets.report.table import format_bytes, format_count, format_seconds


# ---------------------------------------------------------------------------- the values
# Plain, picklable stand-ins for Dagster's metadata values (``dagster_defs.metadata.to_dagster``
# turns them into ``dg.MetadataValue``s when an event is written). They carry the attribute names
# of Dagster's own (``.text``, ``.value``, a table's ``.schema.columns`` and ``.records[i].data``).
@dataclasses.dataclass(frozen=True)
class Text:
    text: str

    @property
    def value(self) -> str:
        return self.text


@dataclasses.dataclass(frozen=True)
class Markdown:
    value: str


@dataclasses.dataclass(frozen=True)
class Number:
    """A float Dagster charts (an int or a bool entry is kept as the plain value)."""

    value: float


@dataclasses.dataclass(frozen=True)
class FilePath:
    path: str

    @property
    def value(self) -> str:
        return self.path


@dataclasses.dataclass(frozen=True)
class Json:
    value: object


@dataclasses.dataclass(frozen=True)
class Column:
    name: str
    kind: str
    description: str | None = None


@dataclasses.dataclass(frozen=True)
class Schema:
    columns: tuple[Column, ...]


@dataclasses.dataclass(frozen=True)
class Record:
    data: dict[str, object]


@dataclasses.dataclass(frozen=True)
class Table:
    records: tuple[Record, ...]
    schema: Schema


Value = Text | Markdown | Number | FilePath | Json | Table | int | str | bool
Metadata = dict[str, Value]
"""An asset partition's UI metadata, as the plain functions of ``solar_assets.asset_compute`` build it."""

PLOT_DIGITS = 4
"""Significant digits of a figure kept as a number for Dagster's plots."""
CODE_MAX_LINES = 400
"""Lines of code shown in one entry; the rest are counted, not shown (the event log keeps every entry)."""
CODE_WRAP_COLUMNS = 120
"""Longer code lines continue on the next: the dialog Dagster shows them in is as wide as the window
less its padding (at 1600 px, 1240 px shown: about 150 monospace characters of ~8.1 px), and a line
past its edge is cut; 120 leaves room down to a window of about 1300 px."""
PNG_EMBED_MAX_BYTES = 1 << 20
"""Larger pictures are named by path, not embedded in the event log."""


def rounded(x: float, digits: int = PLOT_DIGITS) -> float:
    """``x`` to ``digits`` significant digits (``3.205e-05``, never ``3.2051994746268655e-05``)."""
    if not x or not math.isfinite(x):
        return float(x)
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


# ---------------------------------------------------------------------------- figures as text
def seconds(t: float | None) -> Text:
    """``32.1 µs``; ``none`` when there is no figure."""
    return Text("none" if t is None else format_seconds(float(t)))


def count(x: float | None, unit: str = "") -> Text:
    """``1.07 G`` (decimal prefix, 3 significant digits); ``unit`` follows the prefix (``2.15 GFLOP``)."""
    return Text("none" if x is None else format_count(float(x), unit))


def data_size(n: int | None) -> Text:
    """``12 MiB (12,582,912 B)``: memory sizes in binary prefixes, with the exact count beside."""
    if n is None:
        return Text("none")
    return Text(format_bytes(n) if abs(n) < 1024 else f"{format_bytes(n)} ({int(n):,} B)")


def flop_rate(x: float | None) -> Text:
    """``67 TFLOP/s``."""
    return count(x, "FLOP/s")


def byte_rate(x: float | None) -> Text:
    """``3.35 TB/s`` (decimal, as bandwidths are quoted)."""
    return count(x, "B/s")


def factor(x: float | None, what: str) -> Text:
    """``1.03× the peak``: a figure needed as a multiple of the part's own (below 1: to spare)."""
    return Text("none" if x is None else f"{x:.3g}× {what}")


def error(x: float | None) -> Text:
    """A validation error: ``1.2e-07`` (an error has no unit; three digits say all it can)."""
    return Text("none" if x is None else f"{float(x):.2g}")


def peaks(table: Iterable[tuple[str, float]]) -> Markdown:
    """A spec's peaks, one ``unit.dtype: 989 TFLOP/s`` a line."""
    return Markdown("\n".join(f"- {key}: {format_count(float(v), 'FLOP/s')}" for key, v in table))


def sol(time_s: float | None, limiter: str | None) -> Text:
    """``32.1 µs, memory-bound``: a bound with the resource that sets it."""
    if time_s is None:
        return Text("none")
    return Text(f"{format_seconds(time_s)}, {limiter}-bound" if limiter else format_seconds(time_s))


# ---------------------------------------------------------------------------- numbers for plots
def plot_us(t: float | None) -> Number:
    """A time as a float in µs (the unit is in the entry's label), ``PLOT_DIGITS`` digits."""
    return Number(float("nan") if t is None else rounded(float(t) * 1e6))


def plotted_times(times: Mapping[str, float | None]) -> dict[str, Number]:
    """``{"SOL fused [µs]": 32.05, ...}`` for the figures Dagster should chart (None ones left out)."""
    return {f"{name} [µs]": plot_us(t) for name, t in times.items() if t is not None}


# ---------------------------------------------------------------------------- code, pictures, tables
def code(text: str, language: str = "") -> Markdown:
    """A fenced code block, at most ``CODE_MAX_LINES`` lines, none wider than ``CODE_WRAP_COLUMNS``.
    Markdown, not ``MetadataValue.text``: Dagster shows text with its line breaks collapsed, while
    it renders a fenced block as a ``<pre>`` that keeps them (tests/test_browser_ui.py checks that
    no line is cut)."""
    lines = [part for line in text.splitlines() for part in wrap_line(line)]
    if len(lines) > CODE_MAX_LINES:
        lines = lines[:CODE_MAX_LINES] + [f"... ({len(lines) - CODE_MAX_LINES} more lines)"]
    fence = "````" if any(line.startswith("```") for line in lines) else "```"
    return Markdown(f"{fence}{language}\n" + "\n".join(lines) + f"\n{fence}")


def wrap_line(line: str, width: int = CODE_WRAP_COLUMNS) -> list[str]:
    """``line`` as lines of at most ``width`` characters: the first as it is, each continuation
    indented like it and marked ``↪`` (broken at a space where one is near the end)."""
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")))
    mark = indent + "  ↪ "
    out, rest, room = [], line, width
    while len(rest) > room:
        cut = rest.rfind(" ", room // 2, room)
        cut = cut if cut > 0 else room
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip(" ")
        room = width - len(mark)
    out.append(rest)
    return [out[0], *(mark + part for part in out[1:])]


def picture(path: Path, title: str) -> Markdown:
    """A PNG as a Markdown image with a ``data:`` URI (Dagster renders it; no file server needed);
    one over ``PNG_EMBED_MAX_BYTES`` is named by path instead."""
    data = Path(path).read_bytes()
    if len(data) > PNG_EMBED_MAX_BYTES:
        return Markdown(f"{title}: {len(data) / 2**20:.1f} MiB, see `{path}`")
    return Markdown(f"![{title}](data:image/png;base64,{base64.b64encode(data).decode()})")


PER_OP_COLUMNS = (
    ("rank", "int", "1 = the largest share of the unfused time"),
    ("module", "string", "module path and class (features.1 (ReLU)), or JAX name stack"),
    ("op", "string", "framework op and its occurrence in program order (relu#3)"),
    ("line", "string", "the user's line that made the call"),
    ("MACs", "string", "multiply-accumulates"),
    ("FLOPs", "string", "floating-point operations"),
    ("bytes", "string", "one eager kernel's DRAM traffic"),
    ("time unfused", "string", "max(compute, bytes / bandwidth)"),
    ("share", "string", "of the sum of the ops' unfused times"),
    ("limiter", "string", "compute or memory"),
)
PER_OP_UI_MAX_ROWS = 50
UI_TEXT_CHARS = 32
"""The widest text cell of the per-op and per-module tables in the UI (whole in per_op.csv)."""
"""Ops shown on the bounds asset (largest shares first); every op is in the report's per_op.csv."""


def per_op_table(rows: Sequence[PerOpRow], top: int = PER_OP_UI_MAX_ROWS) -> Table:
    """The per-op breakdown (``solar_assets.report.per_op``) as a Dagster table: one record per
    framework op, its figures with units, largest share first."""
    from solar_assets.report.per_module import module_label
    from solar_assets.report.per_op import short_op
    from solar_assets.report.table import clip_left, elide_middle

    # cut as the CLI's table cuts them, so KernelBench's module paths and file names fit the page
    records = [Record({
        "rank": r.rank, "module": clip_left(module_label(r.module, r.module_class), UI_TEXT_CHARS),
        "op": clip_left(r.label or short_op(r.op) or r.node, UI_TEXT_CHARS - 4),
        "line": elide_middle(r.source or "-", UI_TEXT_CHARS - 8),
        "MACs": format_count(r.macs), "FLOPs": format_count(r.flops), "bytes": format_bytes(r.bytes),
        "time unfused": format_seconds(r.time_s), "share": f"{100 * r.share:.1f} %", "limiter": r.limiter})
        for r in sorted(rows, key=lambda r: r.rank)[:top]]
    schema = Schema(tuple(Column(name, kind, why) for name, kind, why in PER_OP_COLUMNS))
    return Table(tuple(records), schema)


PER_MODULE_COLUMNS = (
    ("module", "string", "module path and class, indented under its parent; (model) the whole model"),
    ("ops", "int", "framework op calls inside it"),
    ("MACs", "string", "multiply-accumulates"),
    ("FLOPs", "string", "floating-point operations"),
    ("bytes unfused", "string", "its ops' one-kernel DRAM traffic, summed"),
    ("params", "string", "parameter elements its ops read"),
    ("time unfused", "string", "its ops' unfused roofline times, summed"),
    ("share", "string", "of the whole model's"),
)
PER_MODULE_UI_DEPTH = 3
"""Levels below the model on the bounds asset; per_module.csv has every level."""


def per_module_table(rows: Sequence[PerOpRow], depth: int = PER_MODULE_UI_DEPTH) -> Table:
    """The per-op rows rolled up by module (``report.per_module``) as a Dagster table."""
    from solar_assets.report.per_module import module_rollup, tree_label
    from solar_assets.report.table import clip_left

    records = [Record({
        "module": "\u2003" * m.depth + clip_left(tree_label(m), UI_TEXT_CHARS),
        "ops": m.ops, "MACs": format_count(m.macs), "FLOPs": format_count(m.flops), "bytes unfused": format_bytes(m.bytes),
        "params": format_count(m.params), "time unfused": format_seconds(m.time_s), "share": f"{100 * m.share:.1f} %"})
        for m in module_rollup(rows, depth)]
    schema = Schema(tuple(Column(name, kind, why) for name, kind, why in PER_MODULE_COLUMNS))
    return Table(tuple(records), schema)
