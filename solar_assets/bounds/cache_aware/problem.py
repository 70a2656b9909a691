"""The cache-aware view of a workload: its kernels as ``Einsum`` s in program order, and the dataflow.

``problem_from_graph`` takes what ``solar_assets.graph.EinsumGraph`` provides (its kernel nodes,
storages behind reshape views, graph outputs); ``einsum_from_node`` is the one place a graph node
becomes the mapping space's ``Einsum`` (which keeps the node). Reshape steps move no data and
are transparent: a read through a view is a read of the storage it views.

IR extension (the bound must stay a lower bound; see ``solve.cache_aware_traffic``):

The mapping model prices schedules that exist (its figure is achievable: an upper bound on the
least traffic), so where the IR extension leaves something to data it takes the dearer side:

* an indirect subscript (``X[I[n], c]``) is *spread*: each lookup reads a row of its own, as if
  the indices were distinct (``X@rows[n, c]``, a virtual storage of one row per lookup). Real
  indices that repeat read fewer rows, so what a schedule moves for the spread access it moves
  at most for the real one (re-fetching repeated rows instead of reusing them); the index tensor
  is read as usual. A spread read comes from DRAM (its real storage's writers are written
  back) and a spread write goes to DRAM (later readers read it back);
* graphs with ``Repeat`` bodies, ``TopK`` or ``Cond`` steps are not lifted here
  (``solve.unmodelled_reason``): no schedule is modelled for them (see ``solve.solve_subject``).
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from solar_assets.bounds.cache_aware.mapping import Einsum, TensorUse
from solar_assets.graph.footprint import Footprint, footprint_of, union_footprint
from solar_assets.ir.dtypes import BYTES_PER_ELEMENT
from solar_assets.ir.expr import Access as IRAccess, Affine, Dim, Indirect

if TYPE_CHECKING:
    from solar_assets.graph import EinsumGraph, EinsumNode


@dataclass(frozen=True)
class Problem:
    """Einsums in program order and, per einsum and read storage, which einsum produced it."""

    name: str
    einsums: tuple[Einsum, ...]
    producer: tuple[dict[str, int], ...]  # per einsum: storage read (or accumulated into) -> producer index
    written: tuple[bool, ...]  # the output reaches DRAM whatever the segments (a graph output, or
    # part of a storage that is later read as a whole)
    consumers: tuple[tuple[int, ...], ...]  # per einsum: the later einsums that read its output

    def escapes(self, i: int, segment: range | Sequence[int] = ()) -> bool:
        """Whether einsum i's output must reach DRAM when ``segment`` runs fused."""
        return self.written[i] or any(c not in segment for c in self.consumers[i])

    def key(self) -> str:
        """Digest of the structure (names excluded): repeated workloads share solutions."""
        return self._key

    @cached_property
    def _key(self) -> str:
        text = repr((tuple(e.key() for e in self.einsums),
                     tuple(tuple(sorted((self._read_pos(i, s), p) for s, p in prod.items()))
                           for i, prod in enumerate(self.producer)), self.written))
        return hashlib.sha256(text.encode()).hexdigest()

    def _read_pos(self, i: int, storage: str) -> int:
        e = self.einsums[i]
        for k, t in enumerate(e.reads):
            if t.tensor == storage:
                return k
        return -1  # the output storage (accumulated into)

    @property
    def compulsory_bytes(self) -> int:
        """Σ per einsum of each operand and output once: the unfused traffic."""
        return sum(e.compulsory_bytes for e in self.einsums)


SPREAD = "@rows"
"""Suffix of the virtual storage a spread indirect access reads or writes (see the module docstring)."""


def real_storage(name: str) -> str:
    """The storage a (possibly spread) access name stands for."""
    return name.removesuffix(SPREAD)


def spread_indirect(acc: IRAccess, extents: Mapping[str, int],
                    shape: Sequence[int]) -> tuple[IRAccess, tuple[int, ...]]:
    """``acc`` with every indirect subscript replaced by the row-major index over the variables it
    depends on, and the shape with that dim as long as those variables' box (one row per lookup)."""
    if not acc.is_indirect:
        return acc, tuple(shape)
    index: list[Affine] = []
    sizes: list[int] = []
    for a, size in zip(acc.index, shape):
        if not isinstance(a, Indirect):
            index.append(a)
            sizes.append(int(size))
            continue
        live = [v for v in a.vars if extents.get(v, 1) > 1]
        coefs, stride = [], 1
        for v in reversed(live):
            coefs.append((v, stride))
            stride *= extents[v]
        index.append(Affine(tuple(reversed(coefs)), 0))
        sizes.append(stride)
    return IRAccess(acc.tensor + SPREAD, tuple(index)), tuple(sizes)


def einsum_from_node(node: EinsumNode, graph: EinsumGraph) -> Einsum:
    """The mapping space's view of one kernel node of ``graph`` (the only place an ``Einsum`` is
    made): its ranks of extent > 1, reads grouped by storage (views resolved), compulsory counts
    exact (indirect subscripts spread, see the module docstring); name, text and FLOPs are the node's."""
    pk = node.parsed
    if node.kind != "kernel" or pk is None:
        raise ValueError(f"step {node.name!r} is a {node.kind}: only kernels are einsums of the mapping space")
    if pk.free:
        raise ValueError(f"kernel {node.name!r} is in a repeat body: the mapping model does not lift it")
    tensors = graph.program.tensor_map()
    storage_of = graph.storage_of
    extents = pk.extents
    ranks = tuple((v, n) for v, n in extents.items() if n > 1)
    empty = any(n == 0 for n in extents.values())
    keep = pk.kernel.init == "keep" and pk.kernel.update != "="
    groups: dict[str, list[tuple[IRAccess, tuple[int, ...], str]]] = {}
    for acc in pk.reads:
        spread, shape = spread_indirect(acc, extents, tensors[acc.tensor].shape)
        storage = storage_of.get(acc.tensor, acc.tensor) + (SPREAD if acc.is_indirect else "")
        groups.setdefault(storage, []).append((spread, shape, tensors[acc.tensor].dtype))
    out_acc, out_shape = spread_indirect(pk.out, extents, tensors[pk.out.tensor].shape)
    out_storage = storage_of.get(pk.out.tensor, pk.out.tensor) + (SPREAD if pk.out.is_indirect else "")

    def use(storage: str, accs: Sequence[tuple[IRAccess, tuple[int, ...], str]]) -> TensorUse:
        unique = list(dict.fromkeys(accs))
        fp = union_footprint([(a, extents, shape) for a, shape, _ in unique]) if not empty else None
        if pk.where and fp is not None:  # a condition: the node's own count over the points that run
            op = next((op for op in node.reads.values() if storage_of.get(op.tensor, op.tensor) == storage), None)
            fp = fp if op is None else Footprint(op.elements, op.exact)
        dims = tuple(_dims(a, extents, shape) for a, shape, _ in unique)
        return TensorUse(storage, dims, BYTES_PER_ELEMENT[unique[0][2]],
                         fp.elements if fp else 0, fp.exact if fp else True)

    reads = tuple(use(s, accs) for s, accs in groups.items())
    out_fp = footprint_of(out_acc, extents, out_shape) if not empty else None
    if pk.where and out_fp is not None and node.write is not None:
        out_fp = Footprint(node.write.elements, node.write.exact)
    out = TensorUse(out_storage, (_dims(out_acc, extents, out_shape),),
                    BYTES_PER_ELEMENT[tensors[pk.out.tensor].dtype], out_fp.elements if out_fp else 0,
                    out_fp.exact if out_fp else True)
    return Einsum(node.name, ranks, reads, out, keep, node.flops, empty, text=node.text, node=node)


def _dims(acc: IRAccess, extents: Mapping[str, int], shape: Sequence[int]) -> tuple[Dim, ...]:
    return tuple(Dim.of(a, size, extents) for a, size in zip(acc.index, shape))


def problem_from_graph(graph: EinsumGraph) -> Problem:
    """The kernel nodes of an einsum graph, with views resolved to their storages."""
    einsums = tuple(einsum_from_node(n, graph) for n in graph.nodes if n.kind == "kernel")
    outputs = {graph.storage_of[o] for o in graph.program.result_outputs}
    return _dataflow(graph.program.name, einsums, outputs)


def _dataflow(name: str, einsums: tuple[Einsum, ...], outputs: set[str]) -> Problem:
    """Producers per read, consumers per einsum, and which outputs must reach DRAM regardless.

    A storage's current version is the set of einsums whose writes make it up: one einsum when
    the last write covers the whole storage, several when parts were written separately (the
    parts of a concatenation). A read of a single-writer version may be served on chip by a
    fused segment; a read of a multi-writer version always comes from DRAM, so each of its
    writers is written back, as are the writers of the final version of a graph output.
    """
    last: dict[str, list[int]] = {}
    producer: list[dict[str, int]] = []
    consumers: list[list[int]] = [[] for _ in einsums]
    written = [False] * len(einsums)
    dram_only: set[str] = set()  # storages whose current version a spread write made: read from DRAM
    for i, e in enumerate(einsums):
        prod: dict[str, int] = {}
        reads = [t.tensor for t in e.reads] + ([e.out.tensor] if e.keep else [])
        for storage in reads:
            real = real_storage(storage)
            writers = last.get(real, [])
            if storage != real or real in dram_only:  # a spread read, or a spread write's result
                for w in writers:
                    written[w] = True
                continue
            if len(writers) == 1:
                prod[storage] = writers[0]
            elif writers:  # parts written separately: read back from DRAM
                for w in writers:
                    written[w] = True
        for p in sorted(set(prod.values())):
            consumers[p].append(i)
        producer.append(prod)
        if e.out.tensor != real_storage(e.out.tensor):  # a spread write: to DRAM, read back from there
            real = real_storage(e.out.tensor)
            written[i] = True
            dram_only.add(real)
            last[real] = last.get(real, []) + [i]
            continue
        whole = e.out.compulsory >= math.prod(d.size for d in e.out.accesses[0])
        last[e.out.tensor] = [i] if whole else last.get(e.out.tensor, []) + [i]
        dram_only.discard(e.out.tensor)
    for storage in outputs:
        for w in last.get(storage, []):
            written[w] = True
    return Problem(name, einsums, tuple(producer), tuple(written), tuple(tuple(c) for c in consumers))
