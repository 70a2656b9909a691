"""The einsum graph grouped per framework op: what eager PyTorch (or op-by-op JAX) runs as one kernel.

A tracer lowers one framework op to several IR kernels (a softmax to a max, a sum of exponentials
and a division; a LayerNorm to a mean, a variance and the normalisation; a transposed conv to one
kernel per output phase after a bias fill). Charging every IR kernel its own DRAM round trip
overstates what eager moves: its one kernel per op reads the op's inputs and writes its outputs
once. ``op_groups`` puts the nodes lowered from one op call (the same ``origin.node``) together and
charges a group the tensors crossing its boundary, each once:

* **reads**: every storage a node of the group reads that no node of the group defines (a graph
  input or weight, or another group's result), by the union of the elements the group's nodes
  touch in it;
* **writes**: every storage the group defines that a node outside the group reads or that is a
  graph output, by the union of the elements its nodes write.

Intermediates defined and consumed inside the group (the softmax's row maxima and sums, a copy of
Kᵀ made inside an attention op) cost nothing. A node without an origin (agent-written IR) is a
group of its own, so its cost is the node's own. Reshape nodes move nothing and consume nothing.

Unions are exact where ``footprint.union_footprint`` can enumerate them; for nodes inside repeats,
topk nodes, or where enumeration is too large, the largest single footprint is used, which is a
lower bound (the right direction for a speed-of-light bound; ``OpGroup.exact`` says which).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

from ir_schemas import Origin
from solar_assets.graph.einsum_graph import BYTES_PER_ELEMENT, EinsumGraph, EinsumNode, Operand
from solar_assets.graph.footprint import Footprint, union_footprint


@dataclass(frozen=True)
class OpGroup:
    """The nodes lowered from one framework op call, with one eager kernel's DRAM traffic."""

    key: str  # ``origin.node``, or the node's own name when it has no origin
    origin: Origin | None
    nodes: tuple[str, ...]  # einsum node names, in program order
    macs: int
    flops: int
    reads: dict[str, Operand]  # storage -> elements read from outside the group, once
    writes: dict[str, Operand]  # storage -> elements written that leave the group, once
    exact: bool = True  # False: some union is the largest single footprint (a lower bound)

    @property
    def bytes(self) -> int:
        """DRAM bytes of one eager kernel for the op: boundary reads and writes, each once."""
        return sum(op.bytes for op in self.reads.values()) + sum(op.bytes for op in self.writes.values())


_GROUPED: dict[int, tuple[weakref.ref, tuple, tuple[OpGroup, ...]]] = {}
"""Each live graph's groups, by ``id``, with the origins they were grouped by: a workload's bounds
and its per-op rows on six parts ask for them seven times, and a full-size BigBird graph takes
3.5 s to group."""


def op_groups(graph: EinsumGraph) -> list[OpGroup]:
    """The graph's nodes grouped by origin op, in order of each group's first node (grouped once
    per graph object while it lives and its nodes keep their origins)."""
    origins = tuple(n.origin.node if n.origin is not None else None for n in graph.nodes)
    key = id(graph)
    hit = _GROUPED.get(key)
    if hit is not None and hit[0]() is graph and hit[1] == origins:
        return list(hit[2])
    groups = _op_groups(graph)
    _GROUPED[key] = (weakref.ref(graph, lambda _ref: _GROUPED.pop(key, None)), origins, tuple(groups))
    return groups


def _op_groups(graph: EinsumGraph) -> list[OpGroup]:
    members: dict[str, list[EinsumNode]] = {}
    for node in graph.nodes:
        key = node.origin.node if node.origin is not None else node.name
        members.setdefault(key, []).append(node)
    consumers = _consumer_groups(graph, members)
    outputs = {graph.storage_of[n] for n in graph.program.result_outputs}
    return [_group(graph, key, nodes, consumers, outputs) for key, nodes in members.items()]


def _reads(graph: EinsumGraph, node: EinsumNode) -> list[str]:
    """Storages a node reads (none for a reshape: it only re-views)."""
    return [graph.storage_of[op.tensor] for op in node.reads.values()]


def _writes(graph: EinsumGraph, node: EinsumNode) -> list[Operand]:
    return [op for op in ([node.write] if node.write else []) + list(node.extra_writes)]


def _consumer_groups(graph: EinsumGraph, members: dict[str, list[EinsumNode]]) -> dict[str, set[str]]:
    """Storage -> the groups with a node reading it."""
    out: dict[str, set[str]] = {}
    for key, nodes in members.items():
        for node in nodes:
            for st in _reads(graph, node):
                out.setdefault(st, set()).add(key)
    return out


def _group(graph: EinsumGraph, key: str, nodes: list[EinsumNode], consumers: dict[str, set[str]],
           outputs: set[str]) -> OpGroup:
    defined = {graph.storage_of[op.tensor] for n in nodes for op in _writes(graph, n)}
    read_storages = dict.fromkeys(st for n in nodes for st in _reads(graph, n) if st not in defined)
    leaving = [st for st in dict.fromkeys(graph.storage_of[op.tensor] for n in nodes for op in _writes(graph, n))
               if st in outputs or consumers.get(st, set()) - {key}]
    exact = True
    reads, writes = {}, {}
    for st in read_storages:
        reads[st], ok = _union(graph, nodes, st, writing=False)
        exact &= ok
    for st in leaving:
        writes[st], ok = _union(graph, nodes, st, writing=True)
        exact &= ok
    origin = next((n.origin for n in nodes if n.origin is not None), None)
    return OpGroup(key=key, origin=origin, nodes=tuple(n.name for n in nodes), macs=sum(n.macs for n in nodes),
                   flops=sum(n.flops for n in nodes), reads=reads, writes=writes, exact=exact)


def _union(graph: EinsumGraph, nodes: list[EinsumNode], storage: str, writing: bool) -> tuple[Operand, bool]:
    """The elements of ``storage`` the group's nodes read (or write), as one operand, and whether
    the figure is exact."""
    tensors = graph.program.tensor_map()
    accesses, singles, enumerable = [], [], True
    for n in nodes:
        ops = _writes(graph, n) if writing else list(n.reads.values())
        mine = [op for op in ops if graph.storage_of[op.tensor] == storage]
        if not mine:
            continue
        singles += mine
        pk = n.parsed
        if pk is None or n.repeat != 1 or n.kind != "kernel" or pk.where:
            enumerable = False
            continue
        accs = [pk.out] if writing else [*pk.reads, *([pk.out] if n.update != "=" and pk.kernel.init == "keep" else [])]
        accesses += [(a, pk.extents, tensors[a.tensor].shape) for a in accs if graph.storage_of[a.tensor] == storage]
    dtype = tensors[storage].dtype
    if enumerable and accesses:
        fp = union_footprint(accesses)
    else:
        best = max(singles, key=lambda op: op.elements)
        fp = Footprint(best.elements, best.exact and len(singles) == 1)
    elements = fp.elements
    return Operand(storage, elements, elements * BYTES_PER_ELEMENT[dtype], fp.exact), fp.exact
