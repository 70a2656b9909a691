"""Enumerate an einsum's tile tuples (one compiled pass, ``kernels``) into (footprint, traffic) Pareto frontiers.

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
from solar_assets.bounds.cache_aware.kernels import frontier_points, new_seen, pareto_rows, undominated_hint
from solar_assets.bounds.cache_aware.order_dp import dp_layout

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
    shape = [len(c) for c in cands]
    total = math.prod(shape)
    pos = {r: i for i, r in enumerate(ranks)}
    fused_pos = [pos[r] for r in role.fused]
    tau_stride = [math.prod(shape[p] for p in fused_pos[k + 1:]) for k in range(len(fused_pos))]
    n_tau = math.prod(shape[p] for p in fused_pos)
    inner = [r for r in ranks if r not in role.fused]

    dram = [t for t in e.reads if t.tensor not in role.onchip]
    gathers = [_gathers(t, cands, pos, e.extents) for t in dram]
    out_gather = None if role.out_onchip else _gathers(e.out, cands, pos, e.extents)
    exact = all(g[1] for g in gathers) and (out_gather is None or out_gather[1])
    uses = [(t, g, False) for t, (g, _) in zip(dram, gathers)]
    uses += [(e.out, out_gather[0], True)] if out_gather else []
    indexed = [t.ranks() for t, _, _ in uses]
    args = _kernel_arrays(e, role, cands, fused_pos, tau_stride, uses, indexed, inner, pos)

    parts = []
    seen = new_seen(n_tau)  # shared by the chunks: a tuple dominated by an earlier chunk's skips its DP
    for lo in range(0, total, CHUNK):
        hi = min(total, lo + CHUNK)
        tau, fp, tr, offsets = frontier_points(lo, hi, seen, *args)
        rows = undominated_hint(tau, fp, tr, n_tau)
        parts.append(pareto_by_group(tau[rows], fp[rows], tr[rows], offsets[rows] + lo))
    tau, fp, tr, tid = (np.concatenate(a) for a in zip(*parts))
    tau, fp, tr, tid = pareto_by_group(tau, fp, tr, tid)
    return EinsumFrontier(e, role, cands, tau, fp, tr, tid, exact, reduced, total, time.perf_counter() - start)


def _kernel_arrays(e: Einsum, role: Role, cands, fused_pos: list[int], tau_stride: list[int], uses,
                   indexed: list[frozenset[str]], inner: list[str], pos: dict[str, int]) -> tuple:
    """``kernels.frontier_points``' arguments after ``lo, hi``: the candidate grid, each DRAM
    tensor's accesses and count tables flattened (``uses``: tensor, per-access tables, whether it
    is the output), and the loop-order DP's rank groups."""
    i64 = np.int64
    shape = np.array([len(c) for c in cands], dtype=i64)
    cand = np.zeros((len(cands), max([len(c) for c in cands], default=1)), dtype=i64)
    for i, c in enumerate(cands):
        cand[i, :len(c)] = c
    extents = np.array([n for _, n in e.ranks], dtype=i64)
    t_bytes, t_comp, t_fp, t_weight, t_unread, t_acc = [], [], [], [], [], [0]
    a_live, a_comp, c_table, c_rank, c_ranks = [], [0], [], [0], []
    tables: dict[int, int] = {}
    tab_F, tab_S = [], []
    offset = 0
    for t, per_access, is_out in uses:
        t_bytes.append(t.elem_bytes)
        t_comp.append(t.compulsory)
        t_fp.append(0 if is_out and role.keep_onchip else 1)
        t_weight.append(2 if is_out else 1)
        t_unread.append(1 if is_out and not (e.keep and not role.keep_onchip) else 0)
        for live, tabs in per_access:
            a_live.append(1 if live else 0)
            for tab, ps in tabs:
                if id(tab) not in tables:
                    tables[id(tab)] = offset
                    tab_F.append(tab.F)
                    tab_S.append(tab.S)
                    offset += tab.F.size
                c_table.append(tables[id(tab)])
                c_ranks.extend(ps)
                c_rank.append(len(c_ranks))
            a_comp.append(len(c_table))
        t_acc.append(len(a_live))
    t_phi = np.array([[1 if e.ranks[p][0] not in ix else 0 for p in fused_pos] for ix in indexed],
                     dtype=i64).reshape(len(uses), len(fused_pos))
    groups, dp_plan = dp_layout(inner, indexed)
    g_rank = np.cumsum([0] + [len(m) for m in groups]).astype(i64)
    g_ranks = np.array([pos[r] for m in groups for r in m], dtype=i64)
    arr = lambda xs: np.array(xs, dtype=i64)  # noqa: E731
    return (shape, cand, extents, arr(fused_pos), arr(tau_stride), arr(t_bytes), arr(t_comp), arr(t_fp),
            arr(t_weight), arr(t_unread), arr(t_acc), arr(a_live), arr(a_comp), arr(c_table), arr(c_rank),
            arr(c_ranks), np.concatenate(tab_F).astype(i64) if tab_F else np.zeros(1, i64),
            np.concatenate(tab_S).astype(i64) if tab_S else np.zeros(1, i64), t_phi, g_rank, g_ranks, *dp_plan)


def _gathers(t: TensorUse, cands, pos, extents):
    """Per access: (live, [(table, rank positions)]) and whether all are exact."""
    per_access = []
    exact = t.exact
    for acc in t.accesses:
        comps, live = split_components(acc)
        tabs = []
        for comp in comps:
            tab = component_table(comp.dims, tuple(extents[r] for r in comp.ranks),
                                  tuple(cands[pos[r]] for r in comp.ranks), comp.ranks)
            exact = exact and tab.exact
            tabs.append((tab, [pos[r] for r in comp.ranks]))
        per_access.append((live, tabs))
    return per_access, exact


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
