"""Enumerate an einsum's tile tuples (vectorised numpy) into (footprint, traffic) Pareto frontiers.

Every tuple of candidate tiles gets its buffer footprint (exact integers) and its DRAM traffic
under its best loop order (``order_dp``); only Pareto points survive: a point is kept when no
other point of the same shared-tile choice τ needs no more buffer and moves less. The frontier
does not depend on the capacity, so one serves every hardware and the whole ski-slope sweep.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from solar_assets.bounds.cache_aware.mapping import (
    Einsum,
    Role,
    TensorUse,
    component_table,
    split_components,
    tile_candidates,
)
from solar_assets.bounds.cache_aware.kernels import pareto_rows
from solar_assets.bounds.cache_aware.order_dp import order_costs

logger = logging.getLogger(__name__)

MAX_TUPLES = 1 << 21
"""Most tile tuples enumerated for one einsum; beyond it the largest candidate sets are thinned
(powers of two and the extent, then every other one), which can only raise the minimum."""
CHUNK = 1 << 17


@dataclass(frozen=True)
class EinsumFrontier:
    """Pareto points per shared-tile choice τ, sorted by (τ, footprint); traffic strictly falls."""

    einsum: Einsum
    role: Role
    cands: tuple[tuple[int, ...], ...]  # per rank of einsum.ranks
    tau: np.ndarray  # int64 τ id: mixed radix over role.fused's candidate indices, first most significant
    fp: np.ndarray  # int64 buffer bytes
    tr: np.ndarray  # float64 DRAM bytes (exact below 2^53)
    tuple_id: np.ndarray  # int64 flat index into the candidate grid (C order over einsum.ranks)
    exact: bool
    reduced: bool  # candidate sets were thinned to fit MAX_TUPLES
    tuples: int
    seconds: float

    def tiles(self, tuple_id: int, einsum: Einsum | None = None) -> dict[str, int]:
        """The tiles of one tuple, by the rank names of ``einsum`` (an einsum of the same structure)."""
        shape = [len(c) for c in self.cands]
        idx = np.unravel_index(int(tuple_id), shape) if shape else ()
        ranks = (einsum or self.einsum).ranks
        return {r: self.cands[i][int(j)] for i, ((r, _), j) in enumerate(zip(ranks, idx))}

    @cached_property
    def keys(self) -> np.ndarray:
        """τ·2^42 + footprint: sorted, for a searchsorted within each τ group."""
        return self.tau * (1 << 42) + self.fp

    def group(self, tau: int) -> slice:
        lo, hi = np.searchsorted(self.tau, [tau, tau + 1])
        return slice(int(lo), int(hi))


def candidate_sets(e: Einsum, mode: str, fixed: Mapping[str, tuple[int, ...]] | None = None,
                   max_tuples: int = MAX_TUPLES) -> tuple[tuple[tuple[int, ...], ...], bool]:
    """Candidates per rank (``fixed`` ones as given), the others thinned, largest sets first,
    until the grid has at most ``max_tuples`` tuples."""
    fixed = dict(fixed or {})
    cands = [fixed[r] if r in fixed else tile_candidates(n, mode) for r, n in e.ranks]
    free = [i for i, (r, _) in enumerate(e.ranks) if r not in fixed and len(cands[i]) > 1]
    reduced = False
    while free and math.prod(len(c) for c in cands) > max_tuples:
        i = max(free, key=lambda k: len(cands[k]))
        n = e.ranks[i][1]
        pow2 = tile_candidates(n, "pow2")
        if len(pow2) < len(cands[i]) and set(pow2) != set(cands[i]):
            cands[i] = pow2
        elif len(cands[i]) > 2:
            keep = cands[i][::2]
            cands[i] = tuple(sorted(set(keep) | {cands[i][-1]}))
        else:
            break
        reduced = True
    if reduced:
        logger.info("%s: tile candidates thinned to %d tuples", e.name, math.prod(len(c) for c in cands))
    return tuple(cands), reduced


def partition_ranks(e: Einsum, role: Role) -> set[str]:
    """Inner ranks every DRAM tensor of ``e`` (in ``role``) indexes plainly: alone in each subscript
    that holds them, which stays in range.

    Their tile changes no tensor's summed elements S (the tiles partition the index) and, with
    the rank's loop outermost, no refetch multiplier (every tensor indexes it), so the least
    traffic does not depend on it, while every footprint grows with it: tile 1 dominates every
    other candidate, and the frontier is the same with that candidate alone.
    """
    uses = [t for t in e.reads if t.tensor not in role.onchip] + ([] if role.out_onchip else [e.out])
    extents = e.extents
    out = set()
    for r, _ in e.ranks:
        if r in role.fused:
            continue
        if all(any(r in d.vars for d in acc) and all(d.coefs == ((r, d.coefs[0][1]),) and d.in_range(extents)
                                                       for d in acc if r in d.vars)
               for t in uses for acc in t.accesses):
            out.add(r)
    return out


def einsum_frontier(e: Einsum, role: Role = Role(), mode: str = "union",
                    fixed: Mapping[str, tuple[int, ...]] | None = None,
                    max_tuples: int = MAX_TUPLES) -> EinsumFrontier:
    """Enumerate every tile tuple of ``e`` in ``role``; keep the Pareto points per τ.

    ``fixed`` gives the candidates of some ranks (a segment's shared tiles), never thinned.
    """
    start = time.perf_counter()
    if e.empty:
        z = np.zeros(1, dtype=np.int64)
        return EinsumFrontier(e, role, tuple((1,) for _ in e.ranks), z, z, np.zeros(1), z, True, False, 1,
                              time.perf_counter() - start)
    fixed = dict(fixed or {})
    fixed.update({r: (1,) for r in partition_ranks(e, role)})
    cands, reduced = candidate_sets(e, mode, fixed, max_tuples)
    ranks = [r for r, _ in e.ranks]
    extents = np.array([n for _, n in e.ranks], dtype=np.int64)
    shape = [len(c) for c in cands]
    total = math.prod(shape)
    pos = {r: i for i, r in enumerate(ranks)}
    fused_pos = [pos[r] for r in role.fused]
    tau_stride = [math.prod(shape[p] for p in fused_pos[k + 1:]) for k in range(len(fused_pos))]
    cand_arr = [np.asarray(c, dtype=np.int64) for c in cands]
    inner_pos = [i for i, r in enumerate(ranks) if r not in role.fused]
    inner = [ranks[i] for i in inner_pos]

    dram = [t for t in e.reads if t.tensor not in role.onchip]
    gathers = [_gathers(t, cands, pos, e.extents) for t in dram]
    out_gather = None if role.out_onchip else _gathers(e.out, cands, pos, e.extents)
    exact = all(g[1] for g in gathers) and (out_gather is None or out_gather[1])
    indexed = [t.ranks() for t in dram] + ([e.out.ranks()] if out_gather else [])

    parts = []
    for lo in range(0, total, CHUNK):
        flat = np.arange(lo, min(total, lo + CHUNK), dtype=np.int64)
        idx = np.stack(np.unravel_index(flat, shape)) if shape else np.zeros((0, flat.size), dtype=np.int64)
        tiles = np.stack([cand_arr[i][idx[i]] for i in range(len(ranks))]) if ranks else idx
        trip = -(-extents[:, None] // tiles) if ranks else idx
        fp = np.zeros(flat.size, dtype=np.int64)
        weights = []
        for t, (g, _), ix in zip(dram, gathers, indexed):
            F, S = _counts(g, idx, t.compulsory)
            fp += t.elem_bytes * F
            weights.append(t.elem_bytes * S.astype(np.float64) * _phi(trip, fused_pos, ranks, ix))
        const = np.zeros(flat.size)
        if out_gather is not None:
            F, S = _counts(out_gather[0], idx, e.out.compulsory)
            if not role.keep_onchip:
                fp += e.out.elem_bytes * F
            b = e.out.elem_bytes * S.astype(np.float64)
            weights.append(2 * b * _phi(trip, fused_pos, ranks, indexed[-1]))
            const += -b + (b if e.keep and not role.keep_onchip else 0)
        w = np.stack(weights) if weights else np.zeros((0, flat.size))
        tr = order_costs(trip[inner_pos], inner, indexed, w) + const
        tau = np.zeros(flat.size, dtype=np.int64)
        for p, s in zip(fused_pos, tau_stride):
            tau += idx[p] * s
        parts.append(pareto_by_group(tau, fp, tr, flat))
    tau, fp, tr, tid = (np.concatenate(a) for a in zip(*parts))
    tau, fp, tr, tid = pareto_by_group(tau, fp, tr, tid)
    return EinsumFrontier(e, role, cands, tau, fp, tr, tid, exact, reduced, total, time.perf_counter() - start)


def _phi(trip: np.ndarray, fused_pos: list[int], ranks: list[str], indexed: frozenset[str]) -> np.ndarray:
    """Trips of the segment-level loops a tensor does not index (it is re-fetched on each)."""
    phi = np.ones(trip.shape[1], dtype=np.float64)
    for p in fused_pos:
        if ranks[p] not in indexed:
            phi *= trip[p]
    return phi


def _gathers(t: TensorUse, cands, pos, extents):
    """Per access: (live, [(table, rank positions, candidate counts)]) and whether all are exact."""
    per_access = []
    exact = t.exact
    for acc in t.accesses:
        comps, live = split_components(acc)
        tabs = []
        for comp in comps:
            tab = component_table(comp.dims, tuple(extents[r] for r in comp.ranks),
                                  tuple(cands[pos[r]] for r in comp.ranks), comp.ranks)
            exact = exact and tab.exact
            tabs.append((tab, [pos[r] for r in comp.ranks], [len(cands[pos[r]]) for r in comp.ranks]))
        per_access.append((live, tabs))
    return per_access, exact


def _counts(per_access, idx: np.ndarray, compulsory: int) -> tuple[np.ndarray, np.ndarray]:
    m = idx.shape[1]
    F = np.zeros(m, dtype=np.int64)
    S = np.zeros(m, dtype=np.int64)
    for live, tabs in per_access:
        f = np.full(m, 1 if live else 0, dtype=np.int64)
        s = f.copy()
        for tab, ps, ns in tabs:
            flat = np.zeros(m, dtype=np.int64)
            for p, n in zip(ps, ns):
                flat = flat * n + idx[p]
            f *= tab.F[flat]
            s *= tab.S[flat]
        np.maximum(F, f, out=F)
        np.maximum(S, s, out=S)
    return F, np.maximum(S, compulsory)


def pareto_by_group(group: np.ndarray, fp: np.ndarray, tr: np.ndarray, payload: np.ndarray):
    """Per group, the points no other point of the group dominates; sorted by (group, fp), with
    footprints strictly rising and traffic strictly falling inside a group."""
    if group.size == 0:
        return group, fp, tr, payload
    group, fp = group.astype(np.int64, copy=False), fp.astype(np.int64, copy=False)
    tr = tr.astype(np.float64, copy=False)
    top = int(fp.max()) + 1
    if int(group.max()) >= (1 << 62) // top:  # (group, fp) does not fit one int64 key
        order = np.lexsort((fp, group))
    else:
        order = np.argsort(group * top + fp)
    rows = pareto_rows(order, group, fp, tr)
    return group[rows], fp[rows], tr[rows], payload[rows]


def pareto(fp: np.ndarray, tr: np.ndarray, payload: np.ndarray):
    """The (fp, tr) Pareto points (fp ascending, tr strictly falling) and their payload rows."""
    z = np.zeros(fp.size, dtype=np.int64)
    _, fp, tr, payload = pareto_by_group(z, fp, tr, payload)
    return fp, tr, payload
