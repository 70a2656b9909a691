"""The per-op breakdown: one row per framework op call, with what it costs and what limits it.

"Which op dominates the bound, and is it compute or memory?" is the first question after the
headline figure. The einsum graph's nodes are grouped by the framework op they were lowered from
(``solar_assets.graph.op_groups``: the same ``origin.node``; a node without an origin is its own
group), as eager PyTorch or op-by-op JAX runs one kernel per op. Per group:

* ``macs``, ``flops``: the sums over its nodes (exact, from the einsum graph);
* ``bytes``: one eager kernel's DRAM traffic — the tensors crossing the group's boundary, once each
  (``OpGroup.bytes``);
* ``time_s = max(compute_s, memory_s)``: its unfused roofline time, ``memory_s = bytes / bandwidth``
  and ``compute_s`` from the bounds stage (each node at its own peak: where ``SolBounds.per_op``
  gives a group's busiest-unit time it is used, else the sum of the nodes' ``per_node`` compute
  times, which is exact while every node runs at one peak);
* ``share``: ``time_s`` over the sum of every group's ``time_s`` on that hardware;
* ``limiter``: ``compute`` when ``compute_s > memory_s``, else ``memory`` (as for the bounds).

Groups that neither compute nor move data (views) are left out. Only plain functions of the graph
and the bounds: the CLI, the report files and ``solar.analyze`` share them.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ir_schemas import PerOpRow
from solar_assets.report.per_module import by_pair, module_label, module_rollup

if TYPE_CHECKING:
    from solar_assets.bounds import SolBounds
    from solar_assets.graph import EinsumGraph

PER_OP_STEM = "per_op"


COLUMNS = tuple(PerOpRow.model_fields)


class PerOpTable:
    """Rows of the per-op breakdown, in workload, hardware, then share order."""

    def __init__(self, rows: Iterable[PerOpRow] = ()):
        self.rows: list[PerOpRow] = list(rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, index: int) -> PerOpRow:
        return self.rows[index]

    def __repr__(self) -> str:
        return format_per_op(self.rows, top=10)

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows], columns=list(COLUMNS))

    def top(self, n: int | None) -> PerOpTable:
        """The ``n`` largest shares of each workload × hardware (None: all)."""
        return PerOpTable(r for r in self.rows if n is None or r.rank <= n)

    def by_module(self, depth: int | None = None) -> list:
        """The rows rolled up by module (``report.per_module.module_rollup``): ``ModuleRow`` per
        module of each workload × hardware, down to ``depth`` (None: every depth)."""
        return module_rollup(self.rows, depth)

    def where(self, workload: str | None = None, hardware: str | None = None) -> PerOpTable:
        return PerOpTable(r for r in self.rows if (workload is None or r.workload == workload)
                          and (hardware is None or r.hardware == hardware))


def per_op_rows(workload: str, graph: EinsumGraph, bounds: SolBounds, hardware: str | None = None) -> list[PerOpRow]:
    """The per-op breakdown of ``graph`` (an EinsumGraph) under ``bounds`` (its SolBounds on one
    hardware), largest share first."""
    from solar_assets.graph.op_groups import op_groups

    hardware = hardware or str(bounds.hardware).split("@", 1)[0]
    beta = float(bounds.dram_bytes_per_s)
    compute_of = _group_compute_s(bounds)
    entries = []
    groups = op_groups(graph)
    labels = op_labels(groups)
    calls = call_labels(groups)
    params = first_read_params(graph, groups)
    for g in groups:
        nbytes = int(g.bytes)
        if g.flops == 0 and nbytes == 0:
            continue  # a view: no kernel runs
        compute_s = compute_of(g.nodes)
        memory_s = nbytes / beta
        entries.append((g, nbytes, compute_s, memory_s, max(compute_s, memory_s)))
    total = sum(e[4] for e in entries)
    entries.sort(key=lambda e: -e[4])  # stable: program order among equal times
    rows = []
    for rank, (g, nbytes, compute_s, memory_s, time_s) in enumerate(entries, 1):
        origin = g.origin
        rows.append(PerOpRow(
            workload=workload, hardware=hardware, rank=rank, node=origin.node if origin else g.key,
            op=origin.op if origin else "", module=origin.module if origin else "",
            module_class=origin.scope[-1][1] if origin and origin.scope else "", label=labels[g.key],
            source=origin.source if origin else "", scope=";".join(f"{m}={c}" for m, c in origin.scope) if origin else "",
            macs=int(g.macs),
            flops=int(g.flops), bytes=nbytes, compute_s=compute_s, memory_s=memory_s, time_s=time_s,
            share=time_s / total if total > 0 else 0.0, limiter="compute" if compute_s > memory_s else "memory",
            ir_nodes=len(g.nodes), exact=bool(g.exact), params=params.get(g.key, 0), call=calls[g.key],
            phase=origin.phase if origin else ""))
    return rows


PHASES = ("forward", "backward", "optimizer")


def phase_shares(rows: Sequence[PerOpRow]) -> dict[str, float]:
    """A training step's unfused time by phase (``forward``, ``backward``, ``optimizer``), as shares
    of the rows' total; empty for rows of one forward pass (no phase)."""
    total = sum(r.time_s for r in rows)
    if not any(r.phase for r in rows) or total <= 0:
        return {}
    return {p: sum(r.time_s for r in rows if r.phase == p) / total for p in PHASES
            if any(r.phase == p for r in rows)}


def first_read_params(graph: EinsumGraph, groups: Sequence) -> dict[str, int]:
    """``group key -> parameter elements`` of the parameters (``param:`` bindings) the group is
    the first to read, in program order: a tied weight counts once, at its first use."""
    import math

    decls = graph.program.tensor_map()
    seen: set[str] = set()
    out: dict[str, int] = {}
    for g in groups:
        for storage in g.reads:
            decl = decls.get(storage)
            if decl is not None and (decl.binding or "").startswith("param:") and storage not in seen:
                seen.add(storage)
                out[g.key] = out.get(g.key, 0) + math.prod(decl.shape)
    return out


def op_labels(groups: Sequence) -> dict[str, str]:
    """``group key -> 'relu#3'``: each op's short name and its occurrence in program order, so
    rows of the same op tell apart (views count too: the numbers follow the program, not the
    table); a group without an origin keeps its node's name."""
    seen: dict[str, int] = {}
    out = {}
    for g in groups:
        if g.origin is None:
            out[g.key] = g.key
            continue
        name = short_op(g.origin.op) or g.origin.node
        seen[name] = seen.get(name, 0) + 1
        out[g.key] = f"{name}#{seen[name]}"
    return out


def call_of(origin) -> tuple[str, str]:
    """(name, op) of the user's call an origin belongs to (``Origin.call``), or its own node and op
    when the tracer recorded none."""
    return (origin.call or origin.node, origin.call_op or (origin.op if not origin.call else ""))


def op_key(name: str) -> str:
    """The name both sides agree on: ``aten::relu_`` (eager, in place) and ``aten.relu.default``
    (the export's op with its overload) -> ``relu``; a dunder or private name stays as it is."""
    name = name.strip()
    if name.startswith("aten::"):
        name = name[len("aten::"):]
    elif name.startswith("aten."):
        name = name[len("aten."):].split(".", 1)[0]
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    return name


def call_labels(groups: Sequence) -> dict[str, str]:
    """``group key -> 'linear#2'``: the user's call the group is part of, by the call's op and its
    occurrence in program order (a group without an origin is its own call, named by its key)."""
    seen: dict[str, int] = {}
    numbered: dict[str, str] = {}
    out = {}
    for g in groups:
        if g.origin is None:
            out[g.key] = g.key
            continue
        name, op = call_of(g.origin)
        if name not in numbered:
            short = op_key(op) if op else name
            seen[short] = seen.get(short, 0) + 1
            numbered[name] = f"{short}#{seen[short]}"
        out[g.key] = numbered[name]
    return out


def _group_compute_s(bounds: SolBounds):
    """A function from a group's node names to its compute time: the bounds' own per-op figure
    where they have one for exactly these nodes (the busiest unit's time), else the sum of the
    nodes' compute times."""
    per_op = {frozenset(getattr(o, "nodes", ())): float(o.compute_s) for o in getattr(bounds, "per_op", ()) or ()}
    per_node = {nb.name: float(nb.compute_s) for nb in getattr(bounds, "per_node", ()) or ()}

    def compute_s(nodes: Sequence[str]) -> float:
        key = frozenset(nodes)
        if key in per_op:
            return per_op[key]
        return sum(per_node.get(n, 0.0) for n in nodes)

    return compute_s


# ---------------------------------------------------------------------------- text
def top_count(value: str) -> int | None:
    """``--per-op N|all`` (``solar analyze``, ``solar headroom --profile``): the rows to show per
    workload, None for all; anything but a positive number or ``all`` is a usage error."""
    from solar_assets.errors import SolarError

    if value == "all":
        return None
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise SolarError(f"--per-op takes a positive number of ops or 'all', got {value!r}")
    return n


def short_op(op: str) -> str:
    """``aten.convolution.default`` -> ``convolution``; other names as they are."""
    if op.startswith("aten."):
        op = op[len("aten."):]
        return op[: -len(".default")] if op.endswith(".default") else op
    return op


def format_per_op(rows: Sequence[PerOpRow], top: int | None = 10, markdown: bool = False) -> str:
    """The breakdown as text, one block per workload × hardware with its ``top`` largest shares
    (None: every op); each block says how many ops it leaves out."""
    from solar_assets.report.table import clip_left, elide_middle, format_bytes, format_count, format_seconds, \
        render_columns

    columns = (
        ("#", lambda r: str(r.rank), ">"),
        ("module", lambda r: clip_left(module_label(r.module, r.module_class), 32), "<"),
        *((("phase", lambda r: r.phase or "-", "<"),) if any(r.phase for r in rows) else ()),
        ("op", lambda r: clip_left(r.label or short_op(r.op) or r.node, 28), "<"),
        ("line", lambda r: elide_middle(r.source or "-", 24), "<"),  # the file's ends and the line number
        ("MACs", lambda r: format_count(r.macs), ">"),
        ("FLOPs", lambda r: format_count(r.flops), ">"),
        ("bytes", lambda r: format_bytes(r.bytes), ">"),
        ("time unfused", lambda r: format_seconds(r.time_s), ">"),
        ("share", lambda r: f"{100 * r.share:.1f} %", ">"),
        ("limited by", lambda r: r.limiter, "<"),
    )
    out = []
    for (workload, hardware), block in by_pair(rows).items():
        block = sorted(block, key=lambda r: r.rank)
        shown = [r for r in block if top is None or r.rank <= top]
        title = f"{workload} on {hardware}: {len(block)} op{'s' if len(block) != 1 else ''}"
        if len(shown) < len(block):
            title += f", top {len(shown)} by share of the unfused time (--per-op all for every op)"
        if shares := phase_shares(block):
            title += "; unfused time by phase: " + ", ".join(f"{p} {100 * v:.1f} %" for p, v in shares.items())
        out.append(("### " if markdown else "") + title)
        if markdown:
            out.append("")
        out.append(render_columns(shown, columns, markdown))
        out.append("")
    return "\n".join(out).rstrip("\n")


def write_per_op_csv(rows: Sequence[PerOpRow], path: str | Path) -> str | Path:
    """``per_op.csv``: one line per op, the ``PerOpRow`` fields as columns."""
    PerOpTable(rows).to_pandas().to_csv(path, index=False)
    return path
