"""The best DRAM-loop order for fixed tiles: an exact DP over subsets of ranks.

Cost of an order: Σ_t w_t·μ_t, where μ_t multiplies the trip counts of loops over ranks t does
not index that sit outside the innermost loop over a rank t does index. Loops are placed
innermost first; in state P (the set already placed, inside) a tensor t with P ∩ I_t = ∅
"starts" when a rank of I_t is placed, and from then on every rank placed outside it that t
does not index counts, so its final μ_t = Π_{q ∉ P' ∪ I_t} n_q with P' the state after the
step: the cost of t is fixed at the step it starts, and the DP over subsets is exact
(2^|R| states instead of |R|! orders).

Two reductions keep it small: a rank with one trip never counts and is dropped (placed
outermost), and ranks with the same signature (the same tensors index them) are merged into one
loop with the product of their trips: moving every member next to the innermost one never
raises any μ. (A fused segment's shared loops are not ordered here: they sit outside and scale
the weights, see ``mapping``.)
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from solar_assets.bounds.cache_aware.kernels import order_cost


def best_order(trip: Mapping[str, int], indexed: Sequence[frozenset[str]],
               weights: Sequence[int]) -> tuple[int, tuple[str, ...]]:
    """Exact minimum of Σ_t weights[t]·μ_t over loop orders, and one order (outermost first).

    Integer arithmetic; one-trip ranks lead the order.
    """
    live = [r for r in trip if trip[r] > 1]
    groups = rank_groups(live, indexed)
    g_trip = [math.prod(trip[r] for r in members) for members in groups]
    masks = group_masks(groups, indexed)
    full = (1 << len(groups)) - 1
    prod = [math.prod(g_trip[g] for g in range(len(groups)) if q >> g & 1) for q in range(full + 1)]
    best: dict[int, tuple[int, list[int]]] = {0: (0, [])}
    for P in sorted(range(full + 1), key=lambda s: bin(s).count("1")):
        if P not in best:
            continue
        cost, seq = best[P]
        for g in range(len(groups)):
            if P >> g & 1:
                continue
            Q = P | 1 << g
            add = sum(w * prod[full & ~(Q | m)] for w, m in zip(weights, masks)
                      if m >> g & 1 and not P & m)
            if Q not in best or cost + add < best[Q][0]:
                best[Q] = (cost + add, seq + [g])
    cost, seq = best[full]
    cost += sum(w for w, m in zip(weights, masks) if m == 0)
    order = [r for r in trip if trip[r] <= 1] + [r for g in reversed(seq) for r in groups[g]]
    return cost, tuple(order)


def dp_layout(ranks: Sequence[str], indexed: Sequence[frozenset[str]]) -> tuple[list[tuple[str, ...]], tuple[np.ndarray, ...]]:
    """The DP's rank groups and its steps, unrolled for ``kernels.order_cost``: per step (subset P
    grows by group g to Q, subsets visited by size, g ascending) the tensors that start there
    (ascending) with the subset whose trips multiply their weight, and the tensors indexing no
    group (added once).

    One grouping serves every tile tuple: one-trip ranks are kept in their signature groups (a
    loop of one trip placed outermost changes no μ, so the minimum over orders is the same), and
    merging ranks of one signature is exact for any trips.
    """
    groups = rank_groups(list(ranks), indexed)
    masks = group_masks(groups, indexed)
    full = (1 << len(groups)) - 1
    step_p, step_q, step_terms, term_t, term_q = [], [], [0], [], []
    for P in sorted(range(full + 1), key=lambda q: bin(q).count("1")):
        for g in range(len(groups)):
            if P >> g & 1:
                continue
            Q = P | 1 << g
            for t, mk in enumerate(masks):
                if mk >> g & 1 and not P & mk:
                    term_t.append(t)
                    term_q.append(full & ~(Q | mk))
            step_p.append(P)
            step_q.append(Q)
            step_terms.append(len(term_t))
    free = [t for t, mk in enumerate(masks) if mk == 0]
    arr = lambda xs: np.array(xs, dtype=np.int64)  # noqa: E731
    return groups, (arr(step_p), arr(step_q), arr(step_terms), arr(term_t), arr(term_q), arr(free))


def order_cost_of(trip: Mapping[str, int], indexed: Sequence[frozenset[str]], weights: Sequence[float]) -> float:
    """``best_order``'s minimum through the compiled DP the frontier enumeration runs (float)."""
    groups, plan = dp_layout(list(trip), indexed)
    g_trip = np.array([math.prod(trip[r] for r in members) for members in groups], dtype=np.float64)
    scratch = (np.empty(1 << len(groups)), np.empty(1 << len(groups)))
    return float(order_cost(np.asarray(weights, dtype=np.float64), g_trip, *plan, *scratch))


def group_masks(groups: Sequence[tuple[str, ...]], indexed: Sequence[frozenset[str]]) -> list[int]:
    """Per tensor, the bitmask of the rank groups it indexes."""
    return [sum(1 << g for g, members in enumerate(groups) if set(members) & ix) for ix in indexed]


def rank_groups(live: Sequence[str], indexed: Sequence[frozenset[str]]) -> list[tuple[str, ...]]:
    sig: dict[tuple, list[str]] = {}
    for r in live:
        sig.setdefault(tuple(r in ix for ix in indexed), []).append(r)
    return [tuple(members) for members in sig.values()]


def brute_force_order(trip: Mapping[str, int], indexed: Sequence[frozenset[str]], weights: Sequence[int]) -> int:
    """Minimum over every permutation: the DP's reference, for tests."""
    from solar_assets.bounds.cache_aware.mapping import refetch_multiplier

    return min(sum(w * refetch_multiplier(order, trip, ix) for w, ix in zip(weights, indexed))
               for order in itertools.permutations(list(trip)))
