"""The provable cache-aware lower bound: DRAM traffic no schedule of the program can go below.

The mapping model (``solve``) prices schedules that exist: its figure is achievable, an upper
bound on the least traffic. This module gives the other side of the bracket, valid for *every*
schedule of the program's einsums (any order, tiling, fusion, recomputation) on a part with
``capacity_bytes`` of on-chip storage (``HardwareSpec.onchip_total_bytes``: L2, shared memory / L1
and register files together):

    bytes_cache_aware_lb = max(compulsory, max over eligible contractions of their pebble bound)

* **compulsory**: ``graph.io_bytes``, every graph input and weight element the program reads
  loaded once and every output element written once (gathers at the fewest rows any index
  values read, see ``graph.footprint``);
* **pebble bound** of one contraction ``C[...] += A[...] * B[...]`` with G iteration points,
  element size ``w`` (the smallest of the three) and S = ⌊capacity / w⌋ elements on chip:

      Q ≥ w · max_{L ≥ S} L · (G / ((2S + L)/3)^{3/2} − 1)      (→ √2·G/√S − 4S words at L = 4S)

  by splitting the run into segments of L transfers and bounding the products each segment can
  do with Loomis–Whitney (Shearer's lemma). The argument, and why per-einsum bounds are not
  summed, is written out in ``docs/cache_aware_bound.md``.

A contraction is eligible only where that argument holds for every schedule: a sum of products
of exactly two reads (constants aside) of two different graph inputs / weights that no kernel
writes, into a graph output that no later kernel writes (or one that a chain of elementwise
kernels maps one-to-one onto such an output: a bias add, an activation), every subscript a plain loop variable
(or an in-range constant), every rank of extent > 1 indexed by at least two of the three
tensors, outside repeat bodies, in a graph without value-dependent branches. Anything else
(convolutions' sliding windows, intermediates that may stay on chip) is bounded by the
compulsory traffic alone.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from solar_assets.graph.einsum_graph import BYTES_PER_ELEMENT
from solar_assets.ir.expr import Affine, ParsedKernel

if TYPE_CHECKING:
    from solar_assets.graph import EinsumGraph

SEGMENT_RATIOS = np.unique(np.concatenate([np.geomspace(1.0, 1e6, 721), [1.0, 2.0, 4.0, 8.0]]))
"""Segment lengths L/S tried (any L ≥ S gives a valid bound; the largest is kept)."""


@dataclass(frozen=True)
class PebbleBound:
    """One contraction's red-blue-pebble bound."""

    einsum: str
    iterations: int  # G: multiply-adds every schedule performs at least once
    elem_bytes: int  # w
    capacity_elements: int  # S = ⌊capacity / w⌋
    bytes: int


@dataclass(frozen=True)
class ProvableLowerBound:
    """max(compulsory, the largest eligible pebble bound), with what set it."""

    bytes: int
    capacity_bytes: int
    compulsory_bytes: int
    pebble: PebbleBound | None  # the largest eligible contraction bound (None: none is eligible)

    @property
    def source(self) -> str:
        """'compulsory', or 'pebble:<einsum>' when a contraction's bound is the larger."""
        if self.pebble is not None and self.pebble.bytes > self.compulsory_bytes:
            return f"pebble:{self.pebble.einsum}"
        return "compulsory"


def pebble_elements(iterations: int, capacity_elements: int) -> int:
    """max over L ≥ S of L·(G/((2S + L)/3)^{3/2} − 1), rounded down, at least 0 (transfers)."""
    G, S = float(iterations), float(capacity_elements)
    if G <= 0 or S <= 0:
        return 0
    L = np.ceil(SEGMENT_RATIOS * S)
    q = L * (G / ((2.0 * S + L) / 3.0) ** 1.5 - 1.0)
    best = float(q.max())
    return max(0, math.floor(best * (1.0 - 1e-12)))  # float rounding: err low


def pebble_bytes(iterations: int, capacity_bytes: int, elem_bytes: int) -> int:
    """The pebble bound in bytes: every transfer moves at least ``elem_bytes``."""
    return elem_bytes * pebble_elements(iterations, capacity_bytes // elem_bytes)


def provable_lower_bound(graph: EinsumGraph, capacity_bytes: int) -> ProvableLowerBound:
    """``bytes_cache_aware_lb`` of ``graph`` with ``capacity_bytes`` of on-chip storage."""
    compulsory = int(graph.io_bytes)
    best: PebbleBound | None = None
    if not graph.conds:
        for k in eligible_contractions(graph):
            pk = k.parsed
            elem = min(_elem_bytes(graph, a.tensor) for a in (*pk.reads, pk.out))
            b = PebbleBound(k.name, pk.iterations, elem, int(capacity_bytes) // elem,
                            pebble_bytes(pk.iterations, int(capacity_bytes), elem))
            if best is None or b.bytes > best.bytes:
                best = b
    total = max(compulsory, best.bytes if best else 0)
    return ProvableLowerBound(total, int(capacity_bytes), compulsory, best)


def _elem_bytes(graph: EinsumGraph, tensor: str) -> int:
    return BYTES_PER_ELEMENT[graph.program.tensor_map()[tensor].dtype]


def eligible_contractions(graph: EinsumGraph) -> list:
    """The kernel nodes whose pebble bound holds for every schedule (see the module docstring)."""
    tensors = graph.program.tensor_map()
    storage = graph.storage_of
    kernels = [n for n in graph.nodes if n.kind == "kernel" and n.parsed is not None]
    writers: dict[str, list[int]] = {}
    for i, n in enumerate(kernels):
        writers.setdefault(storage.get(n.parsed.out.tensor, n.parsed.out.tensor), []).append(i)
    outputs = {storage.get(o, o) for o in graph.program.result_outputs}
    out = []
    for i, n in enumerate(kernels):
        pk = n.parsed
        if n.repeats or pk.where or not _two_read_product(pk):  # a condition leaves out points
            continue
        a, b = (storage.get(r.tensor, r.tensor) for r in pk.reads)
        c = storage.get(pk.out.tensor, pk.out.tensor)
        if a == b or c in (a, b):
            continue
        if any(tensors[s].role not in ("input", "weight") or s in writers for s in (a, b)):
            continue  # an operand that can be made (or kept) on chip escapes the argument
        if not _reaches_dram(kernels, i, c, writers, outputs, tensors, storage):
            continue  # the products' sums must reach DRAM, one output element each
        if not all(_plain(acc, pk.extents, tensors[acc.tensor].shape) for acc in (*pk.reads, pk.out)):
            continue
        cover = {v: 0 for v, e in pk.extents.items() if e > 1}
        for acc in (*pk.reads, pk.out):
            for v in {v for d in acc.index for v in d.vars}:
                if v in cover:
                    cover[v] += 1
        if all(k >= 2 for k in cover.values()):
            out.append(n)
    return out


MAX_CHAIN = 8
"""Longest chain of elementwise kernels followed from a contraction to a graph output."""


def _reaches_dram(kernels, i: int, c: str, writers, outputs, tensors, storage, depth: int = 0) -> bool:
    """Every element kernel ``i`` leaves in storage ``c`` reaches DRAM on its own: ``c`` is a graph
    output that no later kernel writes, or a later kernel maps ``c`` one-to-one onto its output
    (``=``, one plain read of ``c``, one iteration per element of ``c``, each iteration its own
    output element: a bias add, an activation) whose storage reaches DRAM in turn. Distinct
    elements of ``c`` then stay distinct values all the way (step 2 of the argument)."""
    if max(writers[c]) != i:
        return False
    if c in outputs:
        return True
    if depth >= MAX_CHAIN:
        return False
    numel = math.prod(tensors[c].shape)
    for j in range(i + 1, len(kernels)):
        n = kernels[j]
        pk = n.parsed
        accs = [a for a in pk.reads if storage.get(a.tensor, a.tensor) == c]
        if len(accs) != 1 or n.repeats or pk.kernel.update != "=" or pk.indirect or pk.iterations != numel:
            continue
        d = storage.get(pk.out.tensor, pk.out.tensor)
        if d == c or not all(_plain(a, pk.extents, tensors[a.tensor].shape) and _covers(a, pk.extents)
                             for a in (accs[0], pk.out)):
            continue
        if _reaches_dram(kernels, j, d, writers, outputs, tensors, storage, depth + 1):
            return True
    return False


def _covers(acc, extents: dict[str, int]) -> bool:
    """Every loop variable of extent > 1 appears in ``acc`` (with ``_plain``: one element per iteration)."""
    used = {v for d in acc.index for v in d.vars}
    return all(v in used for v, e in extents.items() if e > 1)


def _two_read_product(pk: ParsedKernel) -> bool:
    """``+=`` of a product of exactly two tensor reads and numeric constants."""
    if pk.kernel.update != "+=" or pk.indirect or len(pk.reads) != 2:
        return False
    factors = _factors(pk.expr)
    reads = [f for f in factors if isinstance(f, ast.Subscript)]
    consts = [f for f in factors if not isinstance(f, ast.Subscript)]
    return len(reads) == 2 and all(_is_constant(f) for f in consts)


def _factors(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _is_constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool) and node.value != 0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_constant(node.operand)
    return False


def _plain(acc, extents: dict[str, int], shape) -> bool:
    """Every subscript a distinct loop variable (coefficient 1, offset 0, in range) or an in-range
    constant: distinct index tuples of the variables are distinct elements."""
    seen: set[str] = set()
    for d, size in zip(acc.index, shape):
        if not isinstance(d, Affine):
            return False
        live = [(v, c) for v, c in d.coefs if extents.get(v, 1) > 1]  # extent-1 variables are 0
        if not live:
            if not 0 <= d.const < size:
                return False
            continue
        if len(live) != 1 or live[0][1] != 1 or d.const != 0 or live[0][0] in seen:
            return False
        v = live[0][0]
        if extents[v] > size:
            return False
        seen.add(v)
    return True
