"""Fused segments: tiled fusion of a producer → consumer run of einsums along shared ranks.

A segment is a run of consecutive einsums (program order, so it is convex in the DAG) that the
dataflow connects. Its intermediates (outputs read by a later member) stay in the buffer; one
that is also read outside the segment, or is a graph output, is written to DRAM once.

Shared ranks. Each intermediate is addressed by its producer's write and its consumers' reads;
a producer rank and a consumer rank are *linked* when they step the same digit of the storage's
row-major index (same coefficient there, same extent, subscripts in range, no other rank of the
access overlapping it). Ranks are split into mixed-radix pieces where the two sides cut the index
differently (``bmm[b, m, n]`` against ``mul[i0, i1, m, n]`` with ``b = 8·i0 + i1``), so a reshape
or a flattened subscript does not stop fusion; a sliding window (``p + r``) is not a digit and
does not link. A class of linked ranks with one rank in every member is *fusable* when every
link along it is a digit match and every member whose output stays on chip indexes that output
by it (the intermediate must be complete before its consumers read it; a segment's last
einsum may reduce over a shared rank, its partial sums go to DRAM).

The mapping of a segment: the fusable ranks are looped at the segment level, outermost, with one
shared tile each (τ); inside each of those iterations the members run in order, each mapping its
other ranks on its own (tiles and loop order). A member re-fetches its DRAM tiles on every
segment-level iteration: between two of them the other members had the buffer. While member m
runs the buffer holds m's own tiles of its DRAM tensors plus every intermediate live at m (from
its producer to its last in-segment consumer), each the region its producer writes for one τ
tile. The segment's need is the largest of these over its members. Given τ and the capacity the
members are independent, so the segment frontier is the Pareto set over τ of (need, Σ member
traffic + escaping writes), independent of the capacity.

A second plan of the same run *stages* the DRAM inputs several members read (``x`` read by a
layer norm's mean, variance and normalisation kernels): loaded once per segment-level iteration
and held from the first reader to the last. A third *pins* the DRAM inputs that index no shared
rank (a layer norm's weight and bias, the same on every segment-level iteration): loaded once for
the whole segment and held by every member throughout, instead of re-fetched on every iteration
(with the staged inputs too, a fourth). The selection takes whichever plan is cheapest.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

import numpy as np

from solar_assets.bounds.cache_aware.frontier import MAX_TUPLES, EinsumFrontier, einsum_frontier, pareto
from solar_assets.bounds.cache_aware.mapping import (
    Access,
    Einsum,
    Role,
    component_table,
    split_components,
    split_rank,
    tile_candidates,
)
from solar_assets.bounds.cache_aware.problem import Problem
from solar_assets.graph.union_find import connected
from solar_assets.ir.expr import row_major

MAX_TAU = 1 << 12
"""Most shared-tile choices of one segment; beyond it the shared candidates are thinned."""


@dataclass(frozen=True)
class Intermediate:
    """An output kept in the buffer: produced by member ``producer``, last read by member ``last``."""

    storage: str
    producer: int
    last: int
    elem_bytes: int
    escapes: bool  # also written to DRAM once (read outside the segment, or a graph output)
    compulsory: int


@dataclass(frozen=True)
class Staged:
    """A DRAM input several members read: loaded once per segment-level iteration and held
    from its first reader ``first`` to its last ``last`` (every reader reads the same region)."""

    storage: str
    first: int
    last: int
    elem_bytes: int
    compulsory: int


@dataclass(frozen=True)
class SegmentPlan:
    """The structure of one candidate segment (capacity-independent)."""

    members: tuple[int, ...]  # einsum indices in the problem
    einsums: tuple[Einsum, ...]  # the members, ranks split where fusion needs it
    roles: tuple[Role, ...]
    classes: tuple[tuple[str, ...], ...]  # fused classes: the rank of each member
    class_cands: tuple[tuple[int, ...], ...]
    intermediates: tuple[Intermediate, ...]
    staged: tuple[Staged, ...] = ()
    base_ranks: tuple[tuple[str, ...], ...] = ()  # the members' own rank names, before any split
    pinned: tuple[Staged, ...] = ()  # DRAM inputs indexing no shared rank: loaded once, held throughout

    @property
    def escape_bytes(self) -> int:
        return sum(x.elem_bytes * x.compulsory for x in self.intermediates if x.escapes)

    @cached_property
    def role_keys(self) -> tuple[tuple, ...]:
        return tuple(r.key(e) for r, e in zip(self.roles, self.einsums))

    @property
    def n_tau(self) -> int:
        return math.prod(len(c) for c in self.class_cands)

    def tau_tiles(self, tau: int) -> tuple[int, ...]:
        idx = np.unravel_index(int(tau), [len(c) for c in self.class_cands]) if self.class_cands else ()
        return tuple(c[int(i)] for c, i in zip(self.class_cands, idx))


@dataclass(frozen=True)
class SegmentFrontier:
    """(need, traffic) Pareto points of a segment over τ.

    At point k every member takes its least-traffic mapping whose own bytes plus the bytes
    resident while it runs fit ``need[k]`` (so ``need[k]`` is also the segment's exact peak).
    """

    plan: SegmentPlan
    need: np.ndarray  # int64 bytes
    traffic: np.ndarray  # float64 bytes, staged loads and escaping writes included
    tau: np.ndarray  # the shared-tile choice of each point
    member_frontiers: tuple[EinsumFrontier, ...]
    resident: np.ndarray  # (members, n_tau) int64 bytes held for intermediates while each member runs
    exact: bool
    seconds: float
    tuples: int = 0

    def member_choice(self, k: int, tau: int, budget: int) -> int:
        """Index into member k's frontier of its best point with footprint ≤ budget at τ (−1: none)."""
        f = self.member_frontiers[k]
        g = f.group(tau)
        fp = f.fp[g]
        i = int(np.searchsorted(fp, budget, side="right")) - 1
        return -1 if i < 0 else g.start + i


# --------------------------------------------------------------------------------- planning
def _edges(problem: Problem, members: tuple[int, ...]) -> list[tuple[int, int, str]]:
    pos = {m: k for k, m in enumerate(members)}
    return [(pos[p], pos[c], storage) for c in members for storage, p in sorted(problem.producer[c].items())
            if p in pos]


def split_for_fusion(problem: Problem, members: Sequence[int],
                     start: Sequence[Einsum] | None = None) -> list[Einsum]:
    """The members with ranks split until every in-run edge's digits line up.

    ``start``: the result for ``members[:-1]``; splits only refine, so it is a valid start and a
    run grown one einsum at a time costs one pass over its edges.
    """
    members = tuple(members)
    start = list(start or [])
    es = start + [problem.einsums[m] for m in members[len(start):]]
    edges = _edges(problem, members)
    fresh = len(start)  # a start is at its fixpoint: only the new members' edges can split
    pending = [e for e in edges if e[0] >= fresh or e[1] >= fresh] if start else list(edges)
    while pending:
        p, c, storage = pending.pop()
        touched = set()
        for i in range(len(_consumer_accesses(es[c], storage))):  # a split keeps the accesses' order
            while (k := _refine(es, p, es[p].out.accesses[0], c, _consumer_accesses(es[c], storage)[i])) >= 0:
                touched.add(k)
        if touched:
            pending += [e for e in edges if e[0] in touched or e[1] in touched]
    return es


def plan_segment(problem: Problem, members: Sequence[int], mode: str = "union", stage: bool = False,
                 split: Sequence[Einsum] | None = None) -> SegmentPlan | None:
    """The fused structure of a run of einsums; None when the dataflow does not connect them.

    ``stage``: DRAM inputs read by several members (the same region per shared tile) are loaded
    once per segment-level iteration and held for their readers; None when there is none.
    ``split``: ``split_for_fusion(problem, members)``, when the caller has it.
    """
    plans = plan_variants(problem, members, mode, split)
    if not stage:
        return plans[0] if plans else None
    return next((p for p in plans if p.staged and not p.pinned), None)


def plan_variants(problem: Problem, members: Sequence[int], mode: str = "union",
                  split: Sequence[Einsum] | None = None, link_cache: dict | None = None) -> tuple[SegmentPlan, ...]:
    """The plain plan of a run, then (where they exist) the staged, the pinned and the staged and
    pinned plans (see the module docstring)."""
    members = tuple(members)
    pos = {m: k for k, m in enumerate(members)}
    edges = _edges(problem, members)
    if len(members) > 1 and not connected(len(members), ((p, c) for p, c, _ in edges)):
        return ()
    es = list(split) if split is not None else split_for_fusion(problem, members)
    links = _links(es, edges, link_cache)
    classes = _fusable_classes(es, edges, links)
    last: dict[int, int] = {}
    for p, c, _ in edges:
        last[p] = max(last.get(p, p), c)
    roles = []
    for k, e in enumerate(es):
        from_segment = {s for s, p in problem.producer[members[k]].items() if p in pos}
        onchip = frozenset(t.tensor for t in e.reads if t.tensor in from_segment)
        keep_onchip = e.keep and problem.producer[members[k]].get(e.out.tensor) in pos
        roles.append(Role(tuple(cls[k] for cls in classes), onchip, k in last, keep_onchip))
    inter = tuple(Intermediate(es[p].out.tensor, p, last[p], es[p].out.elem_bytes,
                               problem.escapes(members[p], members), es[p].out.compulsory)
                  for p in sorted(last))
    class_cands = [tile_candidates(es[0].extents[cls[0]], mode) for cls in classes]
    while math.prod(len(c) for c in class_cands) > MAX_TAU:
        i = max(range(len(class_cands)), key=lambda j: len(class_cands[j]))
        c = class_cands[i]
        class_cands[i] = tuple(sorted(set(c[::2]) | {c[-1]}))
    base = tuple(tuple(r for r, _ in problem.einsums[m].ranks) for m in members)
    plain = SegmentPlan(members, tuple(es), tuple(roles), tuple(classes), tuple(class_cands), inter, (), base)
    staged = _stageable(problem, members, es, roles, pos) if len(members) > 1 else ()
    pinned = _pinnable(problem, members, es, roles, pos) if len(members) > 1 and classes else ()
    plans = [plain]
    if staged:
        plans.append(_serve(plain, roles, staged=staged))
    if pinned:
        plans.append(_serve(plain, roles, pinned=pinned))
        rest = tuple(x for x in staged if x.storage not in {y.storage for y in pinned})
        if rest:
            plans.append(_serve(plain, roles, staged=rest, pinned=pinned))
    return tuple(plans)


def _serve(plain: SegmentPlan, roles: Sequence[Role], staged: tuple[Staged, ...] = (),
           pinned: tuple[Staged, ...] = ()) -> SegmentPlan:
    """``plain`` with these DRAM inputs served from the buffer to their readers."""
    roles = list(roles)
    for x in staged + pinned:
        for k in range(x.first, x.last + 1):
            if any(t.tensor == x.storage for t in plain.einsums[k].reads):
                roles[k] = replace(roles[k], onchip=roles[k].onchip | {x.storage})
    return replace(plain, roles=tuple(roles), staged=staged, pinned=pinned)


def _pinnable(problem: Problem, members, es, roles, pos) -> tuple[Staged, ...]:
    """DRAM inputs whose every in-segment read indexes no shared rank: one region for the whole
    segment (held from the first member to the last; several readers of one storage whose regions
    differ are held, and charged, once each: an over-estimate, never an undercount)."""
    readers: dict[str, list[int]] = {}
    for k, e in enumerate(es):
        for t in e.reads:
            if problem.producer[members[k]].get(t.tensor) not in pos:
                readers.setdefault(t.tensor, []).append(k)
    written = {e.out.tensor for e in es}
    out = []
    for storage, ks in sorted(readers.items()):
        uses = [(k, es[k].read(storage)) for k in ks]
        if storage in written or any(t.ranks() & set(roles[k].fused) for k, t in uses):
            continue
        shapes = {_region_shape(es[k], roles[k], storage): t for k, t in uses}
        elements = sum(t.compulsory for t in shapes.values())
        out.append(Staged(storage, 0, len(es) - 1, uses[0][1].elem_bytes, elements))
    return tuple(out)


def _stageable(problem: Problem, members, es, roles, pos) -> tuple[Staged, ...]:
    readers: dict[str, list[int]] = {}
    for k, e in enumerate(es):
        for t in e.reads:
            if problem.producer[members[k]].get(t.tensor) not in pos:
                readers.setdefault(t.tensor, []).append(k)
    out = []
    for storage, ks in sorted(readers.items()):
        if len(ks) < 2:
            continue
        shapes = {_region_shape(es[k], roles[k], storage) for k in ks}
        if len(shapes) == 1:
            t = es[ks[0]].read(storage)
            out.append(Staged(storage, ks[0], ks[-1], t.elem_bytes, t.compulsory))
    return tuple(out)


def _region_shape(e: Einsum, role: Role, storage: str) -> tuple:
    """An access with shared ranks named by class and the others by extent: equal shapes, equal regions."""
    cls = {r: i for i, r in enumerate(role.fused)}
    ext = e.extents

    def term(r: str, c: int) -> tuple:
        return (("class", cls[r]) if r in cls else ("inner", ext[r]), c)

    return tuple(sorted(tuple((tuple(sorted(term(r, c) for r, c in d.coefs)), d.const, d.size) for d in acc)
                        for acc in e.read(storage).accesses))


def _consumer_accesses(e: Einsum, storage: str) -> list[Access]:
    accs = [acc for t in e.reads if t.tensor == storage for acc in t.accesses]
    if e.keep and e.out.tensor == storage:
        accs.append(e.out.accesses[0])
    return accs


def digits(acc: Access, extents: dict[str, int]) -> tuple[dict[str, tuple[int, int]], int] | None:
    """The ranks that step a digit of the storage's row-major index: rank -> (coefficient, extent).

    None when a subscript can leave its range (padding: the index is not one storage offset).
    """
    used = tuple(sorted({(r, extents[r]) for d in acc for r, _ in d.coefs}))
    return _digits(acc, used)


@lru_cache(maxsize=65536)
def _digits(acc: Access, used: tuple[tuple[str, int], ...]):
    extents = dict(used)
    if not all(d.in_range(extents) for d in acc):
        return None
    lin = row_major(acc)
    lam, const = dict(lin.coefs), lin.const
    out = {}
    for r, c in lam.items():
        if c <= 0:
            continue
        lo, hi = c, c * extents[r]
        if all(not (q != r and cq > 0 and cq < hi and cq * extents[q] > lo) for q, cq in lam.items()):
            out[r] = (c, extents[r])
    return out, const


def _cut_factors(lam: int, n: int, cuts: set[int]) -> list[int]:
    inner = sorted(c for c in cuts if lam < c < lam * n and c % lam == 0 and n % (c // lam) == 0)
    bounds = [1] + [c // lam for c in inner] + [n]
    factors, prev = [], 1
    for b in bounds[1:]:
        if b % prev == 0 and b // prev > 1:
            factors.append(b // prev)
            prev = b
    return factors if math.prod(factors) == n and len(factors) > 1 else []


def _refine(es: list[Einsum], p: int, w: Access, c: int, r: Access) -> int:
    """Split one rank of producer p or consumer c where the other side cuts its digit; which (−1: none)."""
    dp, dc = digits(w, es[p].extents), digits(r, es[c].extents)
    if dp is None or dc is None or dp[1] != dc[1]:
        return -1
    cuts = {x for lam, n in (*dp[0].values(), *dc[0].values()) for x in (lam, lam * n)}
    for k, dmap in ((p, dp[0]), (c, dc[0])):
        for rank, (lam, n) in dmap.items():
            factors = _cut_factors(lam, n, cuts)
            if factors:
                es[k] = split_rank(es[k], rank, factors)
                return k
    return -1


def _links(es: list[Einsum], edges, cache: dict | None = None) -> dict[tuple[int, int, str], frozenset[tuple[str, str]]]:
    """Per edge: the (producer rank, consumer rank) pairs on one digit for every consumer access.

    ``cache`` (keyed by the two einsum objects, which it keeps alive) spares recounting the
    edges of a run that grows by one einsum.
    """
    out = {}
    for p, c, storage in edges:
        key = (id(es[p]), id(es[c]), storage)
        hit = cache.get(key) if cache is not None else None
        if hit is not None and hit[0] is es[p] and hit[1] is es[c]:
            out[(p, c, storage)] = hit[2]
            continue
        accs = _consumer_accesses(es[c], storage)
        links = _edge_links(es[p].out.accesses[0], _used(es[p], es[p].out.accesses[0]), tuple(accs),
                            tuple(_used(es[c], a) for a in accs))
        if cache is not None:
            cache[key] = (es[p], es[c], links)
        out[(p, c, storage)] = links
    return out


def _used(e: Einsum, acc: Access) -> tuple[tuple[str, int], ...]:
    ext = e.extents
    return tuple(sorted({(r, ext[r]) for d in acc for r, _ in d.coefs}))


@lru_cache(maxsize=65536)
def _edge_links(w: Access, w_used, reads: tuple[Access, ...], r_used) -> frozenset[tuple[str, str]]:
    dp = _digits(w, w_used)
    common = None
    for acc, used in zip(reads, r_used):
        dc = _digits(acc, used)
        pairs = set()
        if dp is not None and dc is not None and dp[1] == dc[1]:
            by_digit = {v: r for r, v in dc[0].items()}
            pairs = {(rp, by_digit[v]) for rp, v in dp[0].items() if v in by_digit}
        common = pairs if common is None else common & pairs
    return frozenset(common or ())


def _fusable_classes(es: list[Einsum], edges, links) -> list[tuple[str, ...]]:
    """Classes of linked ranks with one rank in every member, whose every link is a digit match
    and which index every on-chip output (a class holds a rank of member 0: walk from those)."""
    n = len(es)
    if n == 1:
        return []
    adj: dict[tuple[int, str], list[tuple[int, str]]] = {}
    for (p, c, _), pairs in links.items():
        for rp, rc in pairs:
            adj.setdefault((p, rp), []).append((c, rc))
            adj.setdefault((c, rc), []).append((p, rp))
    out_onchip = {p for p, _, _ in edges}
    classes = []
    for r0, _ in es[0].ranks:
        seen = {(0, r0)}
        todo = [(0, r0)]
        while todo:
            for y in adj.get(todo.pop(), ()):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        if len(seen) != n or len({k for k, _ in seen}) != n:
            continue  # not one rank in every member
        cls = tuple(r for _, r in sorted(seen))
        if all((cls[p], cls[c]) in links[(p, c, s)] for p, c, s in edges) and \
                all(cls[k] in es[k].out.ranks() for k in out_onchip):
            classes.append(cls)
    return classes


# --------------------------------------------------------------------------------- frontier
def segment_frontier(plan: SegmentPlan, mode: str = "union", frontier_cache: dict | None = None,
                     max_tuples: int = MAX_TUPLES) -> SegmentFrontier:
    """Member frontiers per τ, the resident intermediates per τ, combined into the segment frontier."""
    start = time.perf_counter()
    cache = frontier_cache if frontier_cache is not None else {}
    fronts = []
    for e, role, role_key in zip(plan.einsums, plan.roles, plan.role_keys):
        key = (e.shape_digest, role_key, mode, max_tuples, plan.class_cands if role.fused else ())
        if key not in cache:
            fixed = {r: cands for r, cands in zip(role.fused, plan.class_cands)}
            cache[key] = einsum_frontier(e, role, mode, fixed, max_tuples)
        fronts.append(cache[key])  # maybe another einsum's of the same structure: name ranks by plan.einsums
    n_tau = plan.n_tau
    resident = np.zeros((len(plan.einsums), n_tau), dtype=np.int64)
    exact = all(f.exact for f in fronts)
    staged_traffic = np.zeros(n_tau)
    for x in plan.intermediates:
        held, _, _, ok = region_counts(plan, x.producer, plan.einsums[x.producer].out)
        exact = exact and ok
        resident[x.producer:x.last + 1] += x.elem_bytes * held
    for x in plan.staged:
        use = plan.einsums[x.first].read(x.storage)
        held, moved, phi, ok = region_counts(plan, x.first, use)
        exact = exact and ok
        resident[x.first:x.last + 1] += x.elem_bytes * held
        staged_traffic += x.elem_bytes * np.maximum(moved, x.compulsory) * phi
    for x in plan.pinned:  # the whole region, loaded once and held by every member
        resident += x.elem_bytes * x.compulsory
        staged_traffic += x.elem_bytes * x.compulsory
    tau, thr, total, feasible = _combine(fronts, resident, n_tau)
    total += staged_traffic[tau]
    tau, thr, total = tau[feasible], thr[feasible], total[feasible] + plan.escape_bytes
    payload = np.arange(tau.size)
    need, traffic, rows = pareto(thr, total, payload)
    return SegmentFrontier(plan, need, traffic, tau[rows], tuple(fronts), resident, exact,
                           time.perf_counter() - start, sum(f.tuples for f in fronts))


def _combine(fronts: Sequence[EinsumFrontier], resident: np.ndarray, n_tau: int):
    """Every member point's own bytes plus its resident bytes is a candidate threshold; at each,
    every member takes its least-traffic point within (threshold − its resident bytes).

    One searchsorted over all members' points keyed (member, τ, footprint).
    """
    K = len(fronts)
    sizes = [f.tau.size for f in fronts]
    mem = np.repeat(np.arange(K, dtype=np.int64), sizes)
    tau = np.concatenate([f.tau for f in fronts])
    fp = np.concatenate([f.fp for f in fronts])
    tr = np.concatenate([f.tr for f in fronts])
    thr = fp + resident[mem, tau]
    budget = thr[None, :] - resident[:, tau]  # (K, T)
    group = np.arange(K, dtype=np.int64)[:, None] * n_tau + tau[None, :]
    big = 1 << 44
    if int(thr.max(initial=0)) < big and K * n_tau < 1 << 19:  # the combined key fits in int64
        keys = (mem * n_tau + tau) * big + fp  # sorted: members in order, each by (τ, fp)
        q = (group * big + np.maximum(budget, -1)).ravel()
        i = np.searchsorted(keys, q, side="right").reshape(K, -1) - 1
    else:  # one member at a time, on (τ, fp) pairs
        i = np.empty_like(budget)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        for k, f in enumerate(fronts):
            pairs = np.rec.fromarrays([f.tau, f.fp])
            qk = np.rec.fromarrays([tau, np.maximum(budget[k], -1)])
            i[k] = np.searchsorted(pairs, qk, side="right") - 1 + offsets[k]
    i0 = np.maximum(i, 0)
    ok = (budget >= 0) & (i >= 0) & (mem[i0] * n_tau + tau[i0] == group)
    feasible = ok.all(axis=0)
    total = np.where(ok, tr[i0], 0.0).sum(axis=0)
    return tau, thr, total, feasible


def region_counts(plan: SegmentPlan, k: int, use) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Per τ: the elements of ``use`` member ``k`` touches in one segment-level iteration (F, its
    other ranks whole), summed over the iterations' tiles (S), and the trips of the shared loops
    it does not index (φ). Exact integers; several accesses: the largest (a lower bound)."""
    e = plan.einsums[k]
    fused = plan.roles[k].fused
    which = -1 if use is e.out else e.reads.index(use)
    key = (e.shape_digest, plan.role_keys[k][0], which, plan.class_cands if fused else ())
    if key not in _REGIONS:
        if len(_REGIONS) > 1 << 14:
            _REGIONS.clear()
        _REGIONS[key] = _region_counts(tuple(e.ranks), fused, use, plan.class_cands)
    return _REGIONS[key]


_REGIONS: dict = {}


def _region_counts(ranks: tuple[tuple[str, int], ...], fused: tuple[str, ...], use,
                   class_cands: tuple[tuple[int, ...], ...]):
    cand_of = {r: c for r, c in zip(fused, class_cands)}
    shape = [len(c) for c in class_cands]
    tau_idx = np.indices(shape, dtype=np.int64).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
    cls_pos = {r: i for i, r in enumerate(fused)}
    ext = dict(ranks)
    F = np.zeros(tau_idx.shape[1], dtype=np.int64)
    S = np.zeros_like(F)
    exact = use.exact
    for acc in use.accesses:
        f = np.ones(tau_idx.shape[1], dtype=np.int64)
        s = np.ones_like(f)
        comps, live = split_components(acc)
        if not live:
            continue
        for comp in comps:
            cands = tuple(cand_of.get(r, (ext[r],)) for r in comp.ranks)
            tab = component_table(comp.dims, tuple(ext[r] for r in comp.ranks), cands, comp.ranks)
            exact = exact and tab.exact
            flat = np.zeros(tau_idx.shape[1], dtype=np.int64)
            for r, c in zip(comp.ranks, cands):
                flat = flat * len(c) + (tau_idx[cls_pos[r]] if r in cls_pos else 0)
            f *= tab.F[flat]
            s *= tab.S[flat]
        np.maximum(F, f, out=F)
        np.maximum(S, s, out=S)
    phi = np.ones(tau_idx.shape[1], dtype=np.float64)
    indexed = use.ranks()
    for i, (r, c) in enumerate(zip(fused, class_cands)):
        if r not in indexed:
            n = ext[r]
            phi *= -(-n // np.asarray(c, dtype=np.int64)[tau_idx[i]])
    return F, S, phi, exact
