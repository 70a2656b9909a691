"""The einsum graph: each step of a checked program as one extended einsum with exact costs.

A restricted kernel lifts to one node whose ranks are its loop variables, whose operands are
its affine accesses, and whose costs are counted exactly: MACs (for a sum of products), FLOPs
(iterations × arithmetic ops per iteration, so 2 per MAC) and the bytes of every operand's
footprint (``solar_assets.graph.footprint``). A reshape is a zero-cost node: it re-views
storage and moves nothing.

Edges run from the step that last defined a name (a kernel writing it, or the reshape creating
the view) to each later step reading it; every edge names the tensors it carries and the
storage they resolve to through reshapes, so ``A -> reshape -> B`` shows the view while
``storage`` says which bytes actually flow.

Each node keeps its step's ``origin`` (the framework op it was lowered from, when the tracer
recorded one); ``solar_assets.graph.op_groups`` groups nodes per op for the unfused-per-op traffic.

Choices worth knowing (a speed-of-light bound must never overcount bytes):

* all reads of one storage in one kernel (directly or through reshape views) are one operand
  whose footprint is the union of the accesses: exact when small enough to enumerate, else the
  largest single footprint, a lower bound (``Operand.exact`` is False then);
* the written region is read as well only when ``init == 'keep'`` (it accumulates into values
  already there); an accumulation from the identity starts on chip;
* ``io_bytes`` (the fused bound's DRAM traffic) counts each graph input, weight and output
  storage once, by the union of the elements any step touches in it, which is its declared
  size whenever the program reads (or writes) all of it. A tensor the program never touches
  costs nothing, and an output that is a reshape of an input is one storage, counted once.
  ``io_bytes_declared`` is the plain sum of declared sizes, for reference;
* an output that updates an input or buffer in place (``solar_assets.ir.updates``) is that
  tensor's storage: ``io_bytes`` charges it the elements the program writes, and reads of it
  beyond those (the elements the update left in place) as reads of the updated tensor, at least
  ``read − written`` elements of it (``x.mul_(2)`` reads and writes all of ``x``; a KV-cache write
  of one position writes that slice, and a later read of the whole cache reads the rest).

IR extension (see ``docs/interfaces.md``):

* a kernel in the body of ``Repeat`` steps is one node whose MACs, FLOPs and bytes are its
  per-iteration counts × ``repeat`` (the product of the enclosing extents). Per-iteration
  footprints are taken with the repeat variables fixed, at the first and at the last iteration,
  and the smaller is used. Edges follow program order once (no loop-carried back edges, so the
  graph stays a DAG); ``io_bytes`` unions each graph tensor's accesses over all iterations;
* a ``TopK`` step is a zero-FLOP node that reads its source and writes values and indices;
* a ``Linalg`` step reads its operands and writes its results once; its FLOPs are the routine's
  LAPACK count (``ir.linalg``), counted as multiply-adds (``macs`` = FLOPs / 2);
* an indirect access costs ``footprint.indirect_footprint`` elements (the fewest any index values read);
* a ``Cond`` (a value-dependent branch) contributes the nodes of one branch only, chosen so the
  bound stays a lower bound whichever branch runs: every combination of branch choices is
  costed as a whole graph (FLOPs, unfused bytes, fused I/O bytes) and a combination that is no
  larger than every other in all three is kept (``EinsumGraph.conds`` names each cond's branch).
  When no combination is smallest in all three (one branch computes more but moves less),
  or there are more than ``MAX_COND_COMBINATIONS`` combinations, no branch is kept: the
  conds contribute nothing (``conds`` maps them to None), which is below every branch.
"""
from __future__ import annotations

import itertools
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ir_schemas import Cond, Kernel, Linalg, Origin, Program, Repeat, Reshape, TopK
from solar_assets.graph.footprint import Footprint, domain_footprint, footprint_of, union_footprint
from solar_assets.ir import check_program, format_kernel, parse_kernel
from solar_assets.ir.digest import program_digest
from solar_assets.ir.updates import updated_sources
from solar_assets.ir.dtypes import BYTES_PER_ELEMENT, FLOAT_DTYPES  # each tensor at its own width
from solar_assets.ir.linalg import flops as linalg_flops
from solar_assets.ir.printer import format_linalg, format_reshape, format_topk
from solar_assets.ir.expr import Access, Affine, ParsedKernel

if TYPE_CHECKING:  # imported where a graph is built or drawn: loading the Dagster definitions skips it
    import networkx as nx

CODE_VERSION = "4"
"""Bump when the counting rules change: it is the Dagster code version of ``einsum_graph``."""

MAX_COND_COMBINATIONS = 64

MOVES_NOTHING = frozenset({"reshape", "view"})
"""Node kinds that only re-view storage: no FLOPs, no bytes, their result aliases their source."""


@dataclass(frozen=True)
class Operand:
    """One tensor's traffic in a node: distinct elements touched and their bytes."""

    tensor: str
    elements: int
    bytes: int
    exact: bool = True  # False: elements is a proven lower bound (see footprint.py)


@dataclass(frozen=True)
class EinsumNode:
    """One step as an extended einsum. Costs are exact integers (bytes per the tensors' dtypes)."""

    name: str
    kind: Literal["kernel", "reshape", "view", "topk", "linalg"]
    text: str
    ranks: dict[str, int]
    macs: int
    flops: int
    reads: dict[str, Operand]
    write: Operand | None  # None for a reshape or a view
    bytes: int
    inputs: tuple[str, ...] = ()  # names the step reads (a reshape: its source)
    output: str = ""  # the name it writes (a reshape: the new view)
    update: str | None = None
    parsed: ParsedKernel | None = field(default=None, repr=False, compare=False)
    repeat: int = 1  # times the step runs: the product of the enclosing repeats' extents
    repeats: tuple[str, ...] = ()  # the enclosing repeat steps, outermost first
    extra_writes: tuple[Operand, ...] = ()  # a topk's indices (``write`` holds its values)
    origin: Origin | None = None  # the framework op the step was lowered from (None: not recorded)


@dataclass(frozen=True)
class EinsumGraph:
    """A program's einsum nodes in program order and their producer -> consumer DAG."""

    program: Program
    nx: nx.DiGraph
    nodes: tuple[EinsumNode, ...]
    storage_of: dict[str, str]
    """Every tensor name -> the tensor that owns its storage (itself unless it is a reshape view)."""
    io: dict[str, Operand]
    """Graph input, weight and output storages -> the elements the program touches in them."""
    conds: dict[str, int | None] = field(default_factory=dict)
    """Each Cond step -> the branch whose nodes the graph holds (None: no branch, see above)."""

    @property
    def macs(self) -> int:
        return sum(n.macs for n in self.nodes)

    @property
    def flops(self) -> int:
        return sum(n.flops for n in self.nodes)

    @property
    def bytes_unfused(self) -> int:
        """Every node's operands and output through DRAM: Σ node bytes."""
        return sum(n.bytes for n in self.nodes)

    @property
    def io_bytes(self) -> int:
        """Inputs, weights and outputs through DRAM once each (the fused bound's traffic)."""
        return sum(op.bytes for op in self.io.values())

    @property
    def io_bytes_declared(self) -> int:
        """Declared sizes of the input, weight and output storages, each once."""
        tensors = self.program.tensor_map()
        return sum(_numel(tensors[s].shape) * BYTES_PER_ELEMENT[tensors[s].dtype] for s in self.io)

    @property
    def dtype(self) -> str:
        """The float dtype that moves the most bytes through the nodes (the compute peak to use).

        Falls back to declared tensor sizes when no node moves data, to the dominant non-float
        dtype when the program has no float tensors, and to float32 for an empty program.
        """
        tensors = self.program.tensor_map()
        traffic: dict[str, int] = {}
        for node in self.nodes:
            for op in [*node.reads.values(), *([node.write] if node.write else []), *node.extra_writes]:
                dt = tensors[op.tensor].dtype
                traffic[dt] = traffic.get(dt, 0) + op.bytes
        declared: dict[str, int] = {}
        for t in tensors.values():
            declared[t.dtype] = declared.get(t.dtype, 0) + _numel(t.shape) * BYTES_PER_ELEMENT[t.dtype]
        for weights, kinds in ((traffic, FLOAT_DTYPES), (declared, FLOAT_DTYPES),
                               (traffic, tuple(BYTES_PER_ELEMENT)), (declared, tuple(BYTES_PER_ELEMENT))):
            present = [dt for dt in kinds if weights.get(dt, 0) > 0]
            if present:  # ties go to the wider dtype (kinds are listed widest first)
                return max(present, key=lambda dt: (weights[dt], -kinds.index(dt)))
        return "float32"

    def node(self, name: str) -> EinsumNode:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def digest(self) -> str:
        """sha256 of the canonical program JSON: the data version of this graph."""
        return program_digest(self.program)

    def to_dot(self) -> str:
        """The DAG in Graphviz DOT: one box per step with its einsum and costs."""
        lines = [f"digraph {_dot_quote(self.program.name)} {{",
                 '  rankdir=TB; node [shape=box, fontname="monospace", fontsize=10];']
        for n in self.nodes:
            label = f"{n.name}\\n{_dot_escape(n.text)}\\n{_cost_line(n)}"
            style = ', style="dashed"' if n.kind in MOVES_NOTHING else ""
            lines.append(f"  {_dot_quote(n.name)} [label=\"{label}\"{style}];")
        for a, b, data in self.nx.edges(data=True):
            lines.append(f"  {_dot_quote(a)} -> {_dot_quote(b)} [label={_dot_quote(', '.join(data['tensors']))}];")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def draw_png(self, path: str | Path) -> Path:
        """Draw the DAG (layered by topological generation) to a PNG with matplotlib's Agg canvas.

        Byte counts read as everywhere else (``format_bytes``: ``13.0 GiB``); labels are not clipped
        at the axes and the axes are padded, so edge and node labels at the border stay whole.
        Drawn for every ``einsum_graph`` partition, so cheaply (issue 16): laid out in inches
        (``_GraphLayout``: the picture as large as its content, not a fixed page cropped by
        ``bbox_inches="tight"``, which drew it twice), plain artists instead of networkx's drawing
        (its arrows clipped bezier paths against the nodes at every draw): the edges are one line
        collection ending at the squares' borders and one collection of arrowheads."""
        import networkx as nx
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from solar_assets.formatting import format_bytes, format_count
        from solar_assets.png import write_png

        g = self.nx
        order = {n.name: i for i, n in enumerate(self.nodes)}
        layers = [sorted(gen, key=order.__getitem__) for gen in nx.topological_generations(g)] if len(g) else []
        title = (f"{self.program.name}: {format_count(self.macs)} MACs, {format_bytes(self.bytes_unfused)} unfused, "
                 f"{format_bytes(self.io_bytes)} I/O")
        node_labels = {n.name: f"{n.name}\n{format_count(n.macs)} MAC\n{format_bytes(n.bytes)}" for n in self.nodes}
        edge_labels = {(a, b): textwrap.fill(", ".join(d["tensors"]), 28) for a, b, d in g.edges(data=True)}
        layout = _GraphLayout.of(layers, node_labels.values(), edge_labels.values(), title)
        fig = Figure(figsize=layout.figure, dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_axes(layout.axes_rect)
        ax.set_axis_off()
        ax.set_title(title, fontsize=_TITLE_PT, y=1.0)
        ax.set_xlim(0, layout.axes[0])  # data units are inches
        ax.set_ylim(0, layout.axes[1])
        pos = layout.positions
        if pos:
            _draw_edges(ax, [(pos[a], pos[b]) for a, b in g.edges])
            for kernels, color in ((True, "#cfe3f7"), (False, "#eeeeee")):  # kernels blue, reshapes grey
                names = [n for n in pos if (g.nodes[n]["kind"] == "kernel") == kernels]
                if names:
                    ax.scatter([pos[n][0] for n in names], [pos[n][1] for n in names], s=_NODE_SIDE_PT ** 2,
                               marker="s", color=color, edgecolors="none", zorder=2)
            for name, label in node_labels.items():
                ax.text(*pos[name], label, fontsize=_NODE_PT, family="monospace", ha="center", va="center",
                        clip_on=False, zorder=3)
            middles = {edge: ((pos[edge[0]][0] + pos[edge[1]][0]) / 2, (pos[edge[0]][1] + pos[edge[1]][1]) / 2)
                       for edge in edge_labels}
            _label_backgrounds(ax, [(middles[e], label) for e, label in edge_labels.items()])
            for edge, label in edge_labels.items():
                ax.text(*middles[edge], label, fontsize=_EDGE_PT, family="monospace", ha="center", va="center",
                        clip_on=False, zorder=1.5)
        return write_png(fig, path)


def build_einsum_graph(program: Program, source: str = "<program>") -> EinsumGraph:
    """Check ``program`` and lift every step to an einsum node with exact costs (of a cond, the
    branch chosen by ``_choose_branches``)."""
    check_program(program, source)
    conds = [s for s, _ in program.walk_steps() if isinstance(s, Cond)]
    if not conds:
        return _build(program, {})
    return _choose_branches(program, conds)


def _choose_branches(program: Program, conds: list[Cond]) -> EinsumGraph:
    """The graph of the branch combination no larger than any other in FLOPs, unfused bytes and
    fused I/O bytes; with none such (or too many combinations), the graph without any branch."""
    none = {c.name: None for c in conds}
    if math.prod(len(c.branches) for c in conds) > MAX_COND_COMBINATIONS:
        return _build(program, none)
    graphs = [_build(program, {c.name: b for c, b in zip(conds, combo)})
              for combo in itertools.product(*(range(len(c.branches)) for c in conds))]
    costs = [(g.flops, g.bytes_unfused, g.io_bytes) for g in graphs]
    for g, cost in sorted(zip(graphs, costs), key=lambda gc: gc[1]):
        if all(all(a <= b for a, b in zip(cost, other)) for other in costs):
            return g
    return _build(program, none)


def _resolved_steps(steps: tuple, enclosing: tuple[Repeat, ...], choice: dict[str, int | None]) -> list:
    """``walk_steps`` with each cond replaced by its chosen branch (or nothing)."""
    out: list = []
    for st in steps:
        if isinstance(st, Cond):
            b = choice.get(st.name)
            if b is not None:
                out += _resolved_steps(st.branches[b], enclosing, choice)
            continue
        out.append((st, enclosing))
        if isinstance(st, Repeat):
            out += _resolved_steps(st.steps, enclosing + (st,), choice)
    return out


def _build(program: Program, choice: dict[str, int | None]) -> EinsumGraph:
    """The graph of a checked program, each cond taking the branch in ``choice``."""
    storage_of = {t.name: t.name for t in program.tensors}
    for step, _ in program.walk_steps():
        if isinstance(step, Reshape):
            storage_of[step.out] = storage_of[step.src]
        elif isinstance(step, Kernel) and step.view:  # top level only (the checker): no free variables
            pk = parse_kernel(step)
            storage_of[pk.out.tensor] = storage_of[pk.reads[0].tensor]
    import networkx as nx

    steps = _resolved_steps(program.steps, (), choice)

    g = nx.DiGraph(name=program.name)
    nodes: list[EinsumNode] = []
    defined_by: dict[str, str] = {}  # name -> the step that last defined it
    touching: list[Touch] = []  # for io_bytes
    tensors = program.tensor_map()
    for step, enclosing in steps:
        free = {r.var: r.extent for r in enclosing}
        if isinstance(step, Repeat):
            continue
        if isinstance(step, Reshape):
            node = EinsumNode(
                name=step.name, kind="reshape", text=format_reshape(step, tensors), ranks={},
                macs=0, flops=0, reads={}, write=None, bytes=0, inputs=(step.src,), output=step.out,
                repeats=tuple(r.name for r in enclosing), origin=step.origin,
            )
        elif isinstance(step, Kernel) and step.view:
            pk = parse_kernel(step, tuple(free))
            node = EinsumNode(
                name=step.name, kind="view", text=format_kernel(step), ranks={}, macs=0, flops=0, reads={},
                write=None, bytes=0, inputs=(pk.reads[0].tensor,), output=pk.out.tensor, origin=step.origin,
            )
        elif isinstance(step, (TopK, Linalg)):
            node = _topk_node(step, program, enclosing) if isinstance(step, TopK) else \
                _linalg_node(step, program, enclosing)
            written = {step.values, step.indices} if isinstance(step, TopK) else set(step.outs)
            for name in dict.fromkeys((step.src,) if isinstance(step, TopK) else step.args):
                t = tensors[name]
                whole = Access(name, tuple(Affine(((f"d{d}", 1),), 0) for d in range(len(t.shape))))
                touching.append((whole, {f"d{d}": n for d, n in enumerate(t.shape)}, t.shape, None, False))
            for name in written:
                t = tensors[name]
                whole = Access(name, tuple(Affine(((f"d{d}", 1),), 0) for d in range(len(t.shape))))
                touching.append((whole, {f"d{d}": n for d, n in enumerate(t.shape)}, t.shape, None, True))
        else:
            pk = parse_kernel(step, tuple(free))
            node = _kernel_node(step, pk, program, storage_of, enclosing)
            box = pk.box(free)
            for acc in (*pk.reads, pk.out):
                shape = tensors[acc.tensor].shape
                touching.append((acc, box, shape, domain_footprint(acc, pk, shape) if pk.where else None,
                                 acc is pk.out))
        nodes.append(node)
        g.add_node(node.name, kind=node.kind, macs=node.macs, flops=node.flops, bytes=node.bytes,
                   text=node.text, node=node)
        for name in node.inputs:
            producer = defined_by.get(name)
            if producer is None or producer == node.name:
                continue  # a graph input or weight (or state the node itself carries)
            if g.has_edge(producer, node.name):
                data = g.edges[producer, node.name]
                if name not in data["tensors"]:
                    data["tensors"] += (name,)
                    data["storages"] += (storage_of[name],)
            else:
                g.add_edge(producer, node.name, tensors=(name,), storages=(storage_of[name],))
        if node.kind in MOVES_NOTHING:
            defined_by[node.output] = node.name
        else:  # a write through one view redefines every view of that storage
            written = {storage_of[node.output]} | {storage_of[w.tensor] for w in node.extra_writes}
            for name, st in storage_of.items():
                if st in written:
                    defined_by[name] = node.name
    return EinsumGraph(program=program, nx=g, nodes=tuple(nodes), storage_of=storage_of,
                       io=_io_operands(program, touching, storage_of), conds=dict(choice))


def _per_iteration(acc: Access, pk: ParsedKernel, free: dict[str, int], shape: tuple[int, ...]) -> Footprint:
    """The footprint of ``acc`` in one iteration of the enclosing repeats: the smaller of the first
    and the last iteration (they differ only when a padded read leaves the tensor)."""
    if pk.where:
        return domain_footprint(acc, pk, shape) if not free else Footprint(0, False)
    if not free:
        return footprint_of(acc, pk.extents, shape)
    first = footprint_of(acc.bind({v: 0 for v in free}), pk.extents, shape)
    last = footprint_of(acc.bind({v: n - 1 for v, n in free.items()}), pk.extents, shape)
    return min(first, last, key=lambda fp: fp.elements)


def _kernel_node(k: Kernel, pk: ParsedKernel, program: Program, storage_of: dict[str, str],
                 enclosing: tuple[Repeat, ...] = ()) -> EinsumNode:
    tensors = program.tensor_map()
    free = {r.var: r.extent for r in enclosing}
    repeat = math.prod(free.values())
    extents = pk.extents
    read_accesses = list(pk.reads)
    if k.init == "keep" and k.update != "=":
        read_accesses.append(pk.out)
    by_storage: dict[str, list[Access]] = {}
    for acc in read_accesses:
        by_storage.setdefault(storage_of[acc.tensor], []).append(acc)
    reads: dict[str, Operand] = {}
    for st, accs in by_storage.items():
        names = {a.tensor for a in accs}
        key = next(iter(names)) if len(names) == 1 else st
        if free:
            fps = [_per_iteration(a, pk, free, tensors[a.tensor].shape) for a in dict.fromkeys(accs)]
            fp = max(fps, key=lambda f: f.elements) if len(fps) > 1 else fps[0]
            if len(fps) > 1:
                fp = Footprint(fp.elements, False)
        elif pk.where:
            fps = [domain_footprint(a, pk, tensors[a.tensor].shape) for a in dict.fromkeys(accs)]
            fp = fps[0] if len(fps) == 1 else Footprint(max(f.elements for f in fps), False)
        else:
            fp = union_footprint([(a, extents, tensors[a.tensor].shape) for a in accs])
        reads[key] = _operand(key, fp, tensors[key].dtype, repeat)
    out_fp = _per_iteration(pk.out, pk, free, tensors[pk.out.tensor].shape)
    write = _operand(pk.out.tensor, out_fp, tensors[pk.out.tensor].dtype, repeat)
    inputs = tuple(dict.fromkeys(a.tensor for a in read_accesses))
    return EinsumNode(
        name=k.name, kind="kernel", text=format_kernel(k), ranks=dict(extents),
        macs=repeat * (pk.iterations if pk.is_sum_of_products else 0),
        flops=repeat * pk.iterations * pk.ops_per_iteration,
        reads=reads, write=write, bytes=sum(op.bytes for op in reads.values()) + write.bytes,
        inputs=inputs, output=pk.out.tensor, update=k.update, parsed=pk, repeat=repeat,
        repeats=tuple(r.name for r in enclosing), origin=k.origin,
    )


def _topk_node(step: TopK, program: Program, enclosing: tuple[Repeat, ...]) -> EinsumNode:
    """Zero FLOPs; reads all of ``src`` and writes both results, once per iteration."""
    tensors = program.tensor_map()
    repeat = math.prod(r.extent for r in enclosing)

    def whole(name: str) -> Operand:
        t = tensors[name]
        return _operand(name, Footprint(_numel(t.shape)), t.dtype, repeat)

    reads = {step.src: whole(step.src)}
    values, indices = whole(step.values), whole(step.indices)
    return EinsumNode(
        name=step.name, kind="topk", text=format_topk(step), ranks={}, macs=0, flops=0, reads=reads,
        write=values, bytes=reads[step.src].bytes + values.bytes + indices.bytes, inputs=(step.src,),
        output=step.values, repeat=repeat, repeats=tuple(r.name for r in enclosing), extra_writes=(indices,),
        origin=step.origin,
    )


def _linalg_node(step: Linalg, program: Program, enclosing: tuple[Repeat, ...]) -> EinsumNode:
    """A dense linear-algebra routine: its operands and results once, and its LAPACK operation
    count (``ir.linalg``) as FLOPs, half of them as multiply-adds: a blocked factorisation or
    solve is matrix-multiply work, so the matrix unit's peak bounds it."""
    tensors = program.tensor_map()
    repeat = math.prod(r.extent for r in enclosing)

    def whole(name: str) -> Operand:
        t = tensors[name]
        return _operand(name, Footprint(_numel(t.shape)), t.dtype, repeat)

    reads = {name: whole(name) for name in dict.fromkeys(step.args)}
    writes = [whole(name) for name in step.outs]
    count = repeat * linalg_flops(step.routine, [tensors[a].shape for a in step.args], step.options())
    return EinsumNode(
        name=step.name, kind="linalg", text=format_linalg(step), ranks={}, macs=(count + 1) // 2, flops=count,
        reads=reads, write=writes[0], bytes=sum(op.bytes for op in reads.values()) + sum(w.bytes for w in writes),
        inputs=tuple(reads), output=step.outs[0], repeat=repeat, repeats=tuple(r.name for r in enclosing),
        extra_writes=tuple(writes[1:]), origin=step.origin,
    )


Touch = tuple[Access, dict[str, int], tuple[int, ...], "Footprint | None", bool]
"""One access a step makes: the access, its loop box, the shape it indexes, for a kernel with
a ``where`` condition its footprint over the condition's points (None: the box's), and whether
it writes."""


def _io_operands(program: Program, touching: list[Touch], storage_of: dict[str, str]) -> dict[str, Operand]:
    """Per graph input / weight / output storage: the union of what every step touches in it
    (over all iterations of the enclosing repeats). Where a conditioned access is among several
    different ones, the largest single footprint stands for the union (a lower bound)."""
    tensors = program.tensor_map()
    io_names = [t.name for t in program.tensors if t.role in ("input", "weight")] + list(program.result_outputs)
    io_storages = list(dict.fromkeys(storage_of[n] for n in io_names))
    by_storage: dict[str, list[Touch]] = {s: [] for s in io_storages}
    for touch in touching:
        st = storage_of[touch[0].tensor]
        if st in by_storage:
            by_storage[st].append(touch)
    updating = {storage_of[o]: storage_of[src] for o, src in updated_sources(program).items()
                if storage_of[o] != storage_of[src]}  # not a view of the source itself
    out = {}
    for st, touches in by_storage.items():
        if st in updating:  # an in-place update: what it writes (module docstring, in-place updates)
            touches = [t for t in touches if t[4]]
        out[st] = _operand(st, _touched(touches, tensors[st].shape), tensors[st].dtype)
    for st, src in updating.items():
        reads = [t for t in by_storage[st] if not t[4]]
        unwritten = _touched(reads, tensors[st].shape).elements - out[st].elements
        if unwritten > out[src].elements:  # its elements left in place, read later: reads of the source
            out[src] = _operand(src, Footprint(unwritten, False), tensors[src].dtype)
    return out


def _touched(touches: list[Touch], shape: tuple[int, ...]) -> Footprint:
    """The union of what ``touches`` access in one storage of ``shape``; where a conditioned
    access is among several different ones, the largest single footprint (a lower bound)."""
    if not touches:
        return Footprint(0)
    if not any(fp is not None for _, _, _, fp, _ in touches):
        return union_footprint([(acc, box, shp) for acc, box, shp, _, _ in touches])
    fps = list({(acc, tuple(box.items()), shp): fp or footprint_of(acc, box, shp)
                for acc, box, shp, fp, _ in touches}.values())
    numel = _numel(shape)
    return fps[0] if len(fps) == 1 else Footprint(numel) if any(f.exact and f.elements == numel for f in fps) \
        else Footprint(max(f.elements for f in fps), False)


def _operand(tensor: str, fp: Footprint, dtype: str, repeat: int = 1) -> Operand:
    """An operand's traffic; ``repeat`` times a per-iteration footprint inside repeats."""
    elements = fp.elements * repeat
    return Operand(tensor, elements, elements * BYTES_PER_ELEMENT[dtype], fp.exact)


def _numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _cost_line(n: EinsumNode) -> str:
    return f"MACs {n.macs:,}  FLOPs {n.flops:,}  bytes {n.bytes:,}"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _dot_quote(text: str) -> str:
    return '"' + _dot_escape(text) + '"'


_NODE_SIDE_PT = 1800 ** 0.5  # a node's square, points (networkx's node_size=1800: an area in points²)
_ARROW_PT = (8.0, 3.0)  # an arrowhead's length and half width, points
_TITLE_PT, _NODE_PT, _EDGE_PT = 9, 7, 6  # font sizes: title (sans), node and edge labels (monospace)
_MONO_EM = 0.602  # DejaVu Sans Mono's advance, em: a label's width is its longest line × this
_LINE_EM = 1.2  # a label's line height, em (matplotlib's default line spacing)
_MAX_FIGURE_IN = (40.0, 60.0)  # the largest picture; a wider or taller graph's layers are packed closer


@dataclass(frozen=True)
class _GraphLayout:
    """Where the graph picture puts things, in inches: each node's centre (layers top-down, each
    centred), the axes (the content and its margins) and the figure (the axes, 0.1 in around
    them, the title above). Node pitch: the widest node label plus room, at least 1.9 in across
    and 1 in down; margins: half the widest label, so a label at the border stays whole."""

    positions: dict[str, tuple[float, float]]
    axes: tuple[float, float]
    figure: tuple[float, float]

    @property
    def axes_rect(self) -> tuple[float, float, float, float]:
        """The axes as (left, bottom, width, height), fractions of the figure: centred across."""
        (aw, ah), (fw, fh) = self.axes, self.figure
        return ((fw - aw) / 2 / fw, 0.1 / fh, aw / fw, ah / fh)

    @classmethod
    def of(cls, layers: list[list[str]], node_labels, edge_labels, title: str) -> _GraphLayout:
        from matplotlib.font_manager import FontProperties
        from matplotlib.textpath import TextToPath

        def width_in(label: str, em: float, size: float) -> float:
            return max([len(line) for line in label.split("\n")] + [0]) * em * size / 72

        node_w = max([width_in(t, _MONO_EM, _NODE_PT) for t in node_labels] + [_NODE_SIDE_PT / 72])
        edge_w = max([width_in(t, _MONO_EM, _EDGE_PT) for t in edge_labels] + [0])
        margin = (max(node_w, edge_w) / 2 + 0.15, _NODE_SIDE_PT / 72 / 2 + 0.35)
        across = max([len(layer) for layer in layers] + [1])
        pitch = [max(1.9, node_w + 0.3), 1.0]
        for k, count in enumerate((across, len(layers))):  # pack closer rather than exceed the largest picture
            if count > 1:
                pitch[k] = max(min(pitch[k], (_MAX_FIGURE_IN[k] - 0.5 - 2 * margin[k]) / (count - 1)), 0.1)
        axes = (2 * margin[0] + (across - 1) * pitch[0], 2 * margin[1] + (max(len(layers), 1) - 1) * pitch[1])
        title_w = TextToPath().get_text_width_height_descent(title, FontProperties(size=_TITLE_PT), ismath=False)[0]
        figure = (max(axes[0], title_w / 72) + 0.2, axes[1] + 0.45)
        positions = {name: (margin[0] + (j + (across - len(layer)) / 2) * pitch[0], axes[1] - margin[1] - d * pitch[1])
                     for d, layer in enumerate(layers) for j, name in enumerate(layer)}
        return cls(positions, axes, figure)


def _label_backgrounds(ax, labels: list[tuple[tuple[float, float], str]]) -> None:
    """A white box behind each edge label (centred at its point, inches), so the line it sits on
    does not cross its text: one polygon collection, sized from the monospace advance, instead of
    a box patch per label laid out at every draw."""
    from matplotlib.collections import PolyCollection

    if not labels:
        return
    pad = 0.3 * _EDGE_PT / 72
    boxes = []
    for (x, y), label in labels:
        lines = label.split("\n")
        half_w = max(len(line) for line in lines) * _MONO_EM * _EDGE_PT / 72 / 2 + pad
        half_h = len(lines) * _LINE_EM * _EDGE_PT / 72 / 2 + pad / 2
        boxes.append([(x - half_w, y - half_h), (x + half_w, y - half_h), (x + half_w, y + half_h), (x - half_w, y + half_h)])
    ax.add_collection(PolyCollection(boxes, facecolors="white", edgecolors="none", zorder=1.4), autolim=False)


def _draw_edges(ax, edges: list[tuple[tuple[float, float], tuple[float, float]]]) -> None:
    """Straight edges from the border of one node's square to the border of the other's, with an
    arrowhead at the end: one line collection and one polygon collection (data units: inches)."""
    from matplotlib.collections import LineCollection, PolyCollection

    half = _NODE_SIDE_PT / 72 / 2
    length, halfwidth = (v / 72 for v in _ARROW_PT)
    shafts, heads = [], []
    for (xa, ya), (xb, yb) in edges:
        dx, dy = xb - xa, yb - ya
        span = max(abs(dx), abs(dy))
        if span <= 2 * half:
            continue  # the squares touch: no room for an edge
        t = half / span  # where the ray leaves a square: max(|dx|, |dy|)·t = half
        ux, uy = dx / math.hypot(dx, dy), dy / math.hypot(dx, dy)
        start, tip = (xa + t * dx, ya + t * dy), (xb - t * dx, yb - t * dy)
        base = (tip[0] - length * ux, tip[1] - length * uy)
        shafts.append([start, base])
        heads.append([tip, (base[0] - halfwidth * uy, base[1] + halfwidth * ux),
                      (base[0] + halfwidth * uy, base[1] - halfwidth * ux)])
    if not shafts:
        return
    ax.add_collection(LineCollection(shafts, colors="black", linewidths=1, zorder=1), autolim=False)
    ax.add_collection(PolyCollection(heads, facecolors="black", edgecolors="none", zorder=1), autolim=False)
