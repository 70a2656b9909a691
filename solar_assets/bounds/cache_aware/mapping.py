"""The mapping space of one einsum: two memory levels (DRAM, one buffer of C bytes).

A mapping picks one buffer tile ``T_r`` per rank (trip count ``n_r = ⌈N_r/T_r⌉``; the edge tile
may be partial) and an order of the DRAM-level loops over the ranks. Per tensor ``t``:

* its tile footprint ``F_t``: the most distinct in-range elements one tile of the loop box
  touches. A subscript dim is counted exactly (a sliding window ``p*s + q`` gives
  ``min((T_p−1)s + T_q, T_p·T_q)``, a flattened index its mixed-radix product), by enumeration
  where the box is small and by the nested-coefficient rule otherwise;
* ``S_t``: the elements summed over all tiles of the ranks ``t`` indexes (halo re-reads of a
  sliding window included, out-of-range pad elements excluded), never below the compulsory
  footprint (the union of the tensor's accesses over the whole box);
* the refetch multiplier ``μ_t``: the product of the trip counts of the loops over ranks ``t``
  does not index that sit outside the innermost loop over a rank ``t`` does index (1 when every
  rank ``t`` indexes has one trip).

An input costs ``bytes·S_t·μ_t``; the output ``bytes·S_o·(2μ_o − 1)`` (partial sums written on
every pass, read back on all but the first; one more read when the kernel accumulates into the
values already there). The buffer holds ``Σ_t bytes_t·F_t``, compared with C in exact integers.

Within a fused segment (``Role``) some ranks are looped at the segment level, outermost, with a
tile shared by the segment, and the members run one after another inside each of those
iterations. A member re-fetches its DRAM tiles on every segment-level iteration (between two of
them the other members use the buffer): μ_t = Π_{fused r ∉ I_t} n_r · μ_t(inner loops). Tensors
served from the buffer (intermediates, staged inputs) cost the member no traffic and are counted
in the segment's resident set instead. When a count cannot be made exact cheaply it is bounded from
below (a smaller footprint or traffic), the direction a speed-of-light bound may err in, and the
einsum is marked inexact.
"""
from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np

from solar_assets.bounds.cache_aware.kernels import tile_counts
from solar_assets.graph.footprint import distinct_sums
from solar_assets.graph.union_find import group_sharing
from solar_assets.ir.expr import Dim, row_major

if TYPE_CHECKING:
    from solar_assets.graph.einsum_graph import EinsumNode

TILE_MODES = ("union", "divisors", "pow2", "all")
"""Tile candidates per rank: divisors ∪ powers of two ∪ the extent (default), divisors and the
extent, powers of two and the extent, or every trip count (⌈N/j⌉ for all j: any integer tile)."""

ENUM_BOX = 1 << 16
"""Largest loop box of one subscript component counted by enumeration (per candidate tuple)."""
ENUM_WORK = 1 << 23
"""Largest box × candidate-tuple product counted by enumeration; beyond it the closed forms."""


Access = tuple[Dim, ...]
"""One access as the mapping sees it: a ``Dim`` (the IR's affine subscript and its dim's size) per tensor dim."""


@dataclass(frozen=True)
class TensorUse:
    """One storage an einsum reads (or writes): its accesses, element size and compulsory elements."""

    tensor: str
    accesses: tuple[Access, ...]
    elem_bytes: int
    compulsory: int  # distinct in-range elements the accesses touch over the whole loop box
    exact: bool = True

    def ranks(self) -> frozenset[str]:
        return self._ranks

    @cached_property
    def _ranks(self) -> frozenset[str]:
        return frozenset(r for acc in self.accesses for d in acc for r in d.vars)


@dataclass(frozen=True)
class Einsum:
    """A graph kernel node as the mapping space sees it: ranks (extent > 1, loop order), reads and
    output as tiled accesses. Made only by ``problem.einsum_from_node``, which keeps the node
    (``node``: the graph's exact costs and parsed kernel; the same after ``split_rank``)."""

    name: str
    ranks: tuple[tuple[str, int], ...]
    reads: tuple[TensorUse, ...]
    out: TensorUse
    keep: bool = False  # the kernel accumulates into values already in its output
    flops: int = 0
    empty: bool = False  # a zero-trip loop: nothing runs, nothing moves
    text: str = field(default="", compare=False)
    node: EinsumNode | None = field(default=None, compare=False, repr=False)

    @cached_property
    def extents(self) -> dict[str, int]:
        """rank -> extent (shared: do not modify)."""
        return dict(self.ranks)

    @cached_property
    def rank_index(self) -> dict[str, int]:
        return {r: i for i, (r, _) in enumerate(self.ranks)}

    @cached_property
    def read_index(self) -> dict[str, int]:
        return {t.tensor: i for i, t in enumerate(self.reads)}

    @property
    def compulsory_bytes(self) -> int:
        """Each operand and the output once (the keep read too): the unfused bytes of this einsum."""
        if self.empty:
            return 0
        reads = sum(t.compulsory * t.elem_bytes for t in self.reads)
        return reads + self.out.compulsory * self.out.elem_bytes * (2 if self.keep else 1)

    def key(self) -> tuple:
        """Canonical structure, free of names: identical einsums share frontiers."""
        return self._key

    @cached_property
    def digest(self) -> str:
        """A short hash of ``key()``: cheap to hash again in memo keys."""
        return hashlib.sha1(repr(self._key).encode()).hexdigest()

    @cached_property
    def shape_digest(self) -> str:
        """Like ``digest`` but blind to the constant of every subscript that stays in range
        (``x[8, i, j]`` and ``x[9, i, j]``, ``y[i + 160, j]`` and ``y[i + 176, j]``: the steps of an
        unrolled loop). Tiles, footprints and traffic do not depend on them (counts of in-range
        values are shift-invariant); which regions two einsums share does, and callers key that
        separately."""
        return hashlib.sha1(repr(self._structure(blind=True)).encode()).hexdigest()

    @cached_property
    def _key(self) -> tuple:
        return self._structure(blind=False)

    def _structure(self, blind: bool) -> tuple:
        pos = {r: i for i, (r, _) in enumerate(self.ranks)}

        extents = dict(self.ranks)

        def const(d: Dim) -> int | None:
            return None if blind and d.in_range(extents) else d.const

        def use_key(t: TensorUse) -> tuple:
            return (t.elem_bytes, t.compulsory, tuple(
                tuple((tuple((pos[r], c) for r, c in d.coefs), const(d), d.size) for d in acc)
                for acc in t.accesses))

        return (tuple(n for _, n in self.ranks), tuple(use_key(t) for t in self.reads),
                use_key(self.out), self.keep, self.empty)

    def read(self, tensor: str) -> TensorUse:
        for t in self.reads:
            if t.tensor == tensor:
                return t
        raise KeyError(tensor)


@dataclass(frozen=True)
class Role:
    """How an einsum sits in a fused segment (the default: on its own)."""

    fused: tuple[str, ...] = ()  # ranks looped at the segment level (outermost, shared tiles)
    onchip: frozenset[str] = frozenset()  # read storages served from the buffer
    out_onchip: bool = False  # the output stays in the buffer (an in-segment consumer reads it)
    keep_onchip: bool = False  # the values accumulated into come from an in-segment producer

    def key(self, e: Einsum) -> tuple:
        """Positions, not names: with ``e.shape_digest`` it identifies the enumeration."""
        pos, reads = e.rank_index, e.read_index
        return (tuple(pos[r] for r in self.fused), tuple(sorted(reads[s] for s in self.onchip if s in reads)),
                self.out_onchip, self.keep_onchip)


# --------------------------------------------------------------------------------- tile candidates
def tile_candidates(extent: int, mode: str = "union") -> tuple[int, ...]:
    """Candidate tiles of a rank, each the smallest tile with its trip count (edge tiles partial)."""
    if mode not in TILE_MODES:
        raise ValueError(f"tile mode {mode!r}: expected one of {', '.join(TILE_MODES)}")
    n = int(extent)
    if n <= 1:
        return (1,)
    raw: set[int] = {n}
    if mode in ("union", "divisors"):
        raw |= _divisors(n)
    if mode in ("union", "pow2"):
        raw |= {1 << i for i in range(n.bit_length()) if (1 << i) < n}
    if mode == "all":
        root = math.isqrt(n) + 1
        raw |= {-(-n // j) for j in range(1, root + 1)} | set(range(1, root + 1))
    return tuple(sorted({-(-n // -(-n // t)) for t in raw if 1 <= t <= n}))


def _divisors(n: int) -> set[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return set(small) | {n // d for d in small}


def trips(extent: int, tile: int) -> int:
    return -(-extent // tile)


# --------------------------------------------------------------------------------- footprints
@dataclass(frozen=True)
class Component:
    """Subscript dims of one access that share ranks, and those ranks (sorted by name)."""

    dims: tuple[Dim, ...]
    ranks: tuple[str, ...]


def split_components(access: Access) -> tuple[tuple[Component, ...], bool]:
    """The access's independent components, and False when a constant subscript is out of range."""
    live = True
    dims = []
    for d in access:
        if d.coefs:
            dims.append(d)
        elif not 0 <= d.const < d.size:
            live = False
    groups = group_sharing(dims, lambda d: d.vars)
    comps = tuple(Component(tuple(dims[i] for i in members),
                            tuple(sorted({r for i in members for r in dims[i].vars})))
                  for members in groups)
    return comps, live


@dataclass(frozen=True)
class ComponentTable:
    """F (most in-range elements of one tile) and S (summed over tiles) per candidate tuple."""

    F: np.ndarray  # int64, flat over the candidate grid of the component's ranks (C order)
    S: np.ndarray
    exact: bool


@lru_cache(maxsize=16384)
def component_table(dims: tuple[Dim, ...], extents: tuple[int, ...],
                    cands: tuple[tuple[int, ...], ...], ranks: tuple[str, ...]) -> ComponentTable:
    """Counts for every tuple of candidate tiles of ``ranks`` (extents and candidates aligned)."""
    ext = dict(zip(ranks, extents))
    total = math.prod(len(c) for c in cands)
    box = math.prod(extents)
    in_range = all(d.in_range(ext) for d in dims)
    if len(dims) == 1 and len(ranks) == 1 and in_range:  # a plain index: tiles partition it
        t = np.minimum(np.asarray(cands[0], dtype=np.int64), extents[0])
        return ComponentTable(t, np.full(len(t), extents[0], dtype=np.int64), True)
    if box <= ENUM_BOX and box * total <= ENUM_WORK:
        return _enumerated(dims, extents, cands, ranks)
    if in_range:
        return _structural(dims, extents, cands, ranks)
    return _lower_bound(dims, extents, cands, ranks)


def _enumerated(dims, extents, cands, ranks) -> ComponentTable:
    pos = {r: i for i, r in enumerate(ranks)}
    grid = np.indices(extents, dtype=np.int64).reshape(len(ranks), -1)
    mask = np.ones(grid.shape[1], dtype=bool)
    key = np.zeros(grid.shape[1], dtype=np.int64)
    for d in dims:
        v = np.full(grid.shape[1], d.const, dtype=np.int64)
        for r, c in d.coefs:
            v += c * grid[pos[r]]
        mask &= (v >= 0) & (v < d.size)
        key = key * d.size + np.clip(v, 0, d.size - 1)
    grid = grid[:, mask]
    _, key = np.unique(key[mask], return_inverse=True)
    keyspace = int(key.max()) + 1 if key.size else 1
    tuples = np.array(list(itertools.product(*cands)), dtype=np.int64).reshape(-1, len(ranks))
    F, S = tile_counts(np.ascontiguousarray(grid), key.astype(np.int64).ravel(), keyspace, tuples,
                       np.asarray(extents, dtype=np.int64))
    return ComponentTable(F, S, True)


def _structural(dims, extents, cands, ranks) -> ComponentTable:
    """Every subscript stays in range: count distinct linear offsets by the nested rule."""
    lin = row_major(dims)  # one-to-one on in-range tuples
    coef = [lin.coef(r) for r in ranks]
    F = np.zeros(math.prod(len(c) for c in cands), dtype=np.int64)
    S = np.zeros_like(F)
    exact = True
    for flat, tup in enumerate(itertools.product(*cands)):
        f, ok = distinct_sums([(c, min(t, n)) for c, t, n in zip(coef, tup, extents)])
        options = []
        for t, n in zip(tup, extents):
            t = min(t, n)
            opts = [(t, n // t)] + ([(n % t, 1)] if n % t else [])
            options.append(opts)
        s = 0
        for choice in itertools.product(*options):
            cnt, ok2 = distinct_sums([(c, size) for c, (size, _) in zip(coef, choice)])
            s += cnt * math.prod(m for _, m in choice)
            ok = ok and ok2
        F[flat], S[flat] = f, s
        exact = exact and ok
    return ComponentTable(F, S, exact)


def _lower_bound(dims, extents, cands, ranks) -> ComponentTable:
    """Padded and too large to enumerate: one element per tile, the in-range footprint in all."""
    from solar_assets.graph.footprint import footprint_of
    from solar_assets.ir.expr import Access as IRAccess

    acc = IRAccess("t", dims)
    fp = footprint_of(acc, dict(zip(ranks, extents)), tuple(d.size for d in dims)).elements
    total = math.prod(len(c) for c in cands)
    return ComponentTable(np.full(total, min(fp, 1), dtype=np.int64),
                          np.full(total, fp, dtype=np.int64), False)


# --------------------------------------------------------------------------------- one mapping
def use_counts(use: TensorUse, tiles: Mapping[str, int], extents: Mapping[str, int]) -> tuple[int, int]:
    """(F, S) of one tensor for one tile choice, in elements (S clamped to the compulsory count)."""
    F = S = 0
    for acc in use.accesses:
        f, s = 1, 1
        comps, live = split_components(acc)
        if not live:
            f = s = 0
        for comp in comps:
            tab = component_table(comp.dims, tuple(extents[r] for r in comp.ranks),
                                  tuple((tiles[r],) for r in comp.ranks), comp.ranks)
            f, s = f * int(tab.F[0]), s * int(tab.S[0])
        F, S = max(F, f), max(S, s)
    return F, max(S, use.compulsory)


def refetch_multiplier(order: Sequence[str], trip: Mapping[str, int], indexed: frozenset[str]) -> int:
    """μ: trips of loops over ranks the tensor does not index, outside its innermost indexed loop."""
    live = [i for i, r in enumerate(order) if r in indexed and trip[r] > 1]
    if not live:
        return 1
    return math.prod(trip[r] for r in order[:live[-1]] if r not in indexed)


def fused_multiplier(fused: Sequence[str], trip: Mapping[str, int], indexed: frozenset[str]) -> int:
    """Segment-level iterations that re-fetch a member's tile: trips of shared loops it does not index."""
    return math.prod(trip[r] for r in fused if r not in indexed)


def mapping_cost(e: Einsum, tiles: Mapping[str, int], order: Sequence[str],
                 role: Role = Role()) -> tuple[int, int]:
    """(buffer bytes, DRAM traffic bytes) of one mapping, in exact integers.

    ``order`` lists the einsum's own DRAM loops outermost first (the ranks not in ``role.fused``;
    the segment-level loops sit outside them).
    """
    if e.empty:
        return 0, 0
    extents = e.extents
    inner = [r for r in extents if r not in role.fused]
    if sorted(order) != sorted(inner):
        raise ValueError(f"{e.name}: order {list(order)} is not a permutation of {inner}")
    trip = {r: trips(n, tiles[r]) for r, n in extents.items()}

    def mu(indexed: frozenset[str]) -> int:
        return fused_multiplier(role.fused, trip, indexed) * refetch_multiplier(order, trip, indexed)

    footprint = traffic = 0
    for use in e.reads:
        if use.tensor in role.onchip:
            continue
        F, S = use_counts(use, tiles, extents)
        footprint += use.elem_bytes * F
        traffic += use.elem_bytes * S * mu(use.ranks())
    if not role.out_onchip:
        F, S = use_counts(e.out, tiles, extents)
        mu_o = mu(e.out.ranks())
        if not role.keep_onchip:
            footprint += e.out.elem_bytes * F
        traffic += e.out.elem_bytes * S * (2 * mu_o - 1 + (1 if e.keep and not role.keep_onchip else 0))
    return footprint, traffic


# --------------------------------------------------------------------------------- re-indexing
def split_rank(e: Einsum, rank: str, factors: Sequence[int]) -> Einsum:
    """``rank = Σ piece_i · Π_{j<i} f_j``: the same einsum over finer ranks (lowest digit first)."""
    extents = e.extents
    if math.prod(factors) != extents[rank] or any(f < 2 for f in factors):
        raise ValueError(f"{e.name}: cannot split {rank} of extent {extents[rank]} into {list(factors)}")
    names = [f"{rank}.{i}" for i in range(len(factors))]
    scale = [math.prod(factors[:i]) for i in range(len(factors))]

    def dim(d: Dim) -> Dim:
        terms: list[tuple[str, int]] = []
        for r, c in d.coefs:
            terms.extend(zip(names, (c * s for s in scale)) if r == rank else [(r, c)])
        return Dim(tuple(terms), d.const, d.size)

    def use(t: TensorUse) -> TensorUse:
        return replace(t, accesses=tuple(tuple(dim(d) for d in acc) for acc in t.accesses))

    ranks: list[tuple[str, int]] = []
    for r, n in e.ranks:
        ranks.extend(reversed(list(zip(names, factors))) if r == rank else [(r, n)])
    return replace(e, ranks=tuple(ranks), reads=tuple(use(t) for t in e.reads), out=use(e.out))
