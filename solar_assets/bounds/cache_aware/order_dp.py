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


def best_order(trip: Mapping[str, int], indexed: Sequence[frozenset[str]],
               weights: Sequence[int]) -> tuple[int, tuple[str, ...]]:
    """Exact minimum of Σ_t weights[t]·μ_t over loop orders, and one order (outermost first).

    Integer arithmetic; one-trip ranks lead the order.
    """
    live = [r for r in trip if trip[r] > 1]
    groups = _groups(live, indexed)
    g_trip = [math.prod(trip[r] for r in members) for members in groups]
    masks = [sum(1 << g for g, members in enumerate(groups) if set(members) & ix) for ix in indexed]
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


def order_costs(trip: np.ndarray, ranks: Sequence[str], indexed: Sequence[frozenset[str]],
                weights: np.ndarray) -> np.ndarray:
    """Vectorised ``best_order`` costs: ``trip`` is (R, M) int, ``weights`` (T, M) float → (M,).

    One grouping serves every tuple: one-trip ranks are kept in their signature groups (a loop
    of one trip placed outermost changes no μ, so the minimum over orders is the same), and
    merging ranks of one signature is exact for any trips.
    """
    R, M = trip.shape
    if M == 0:
        return np.empty(0)
    groups = _groups(list(ranks), indexed)
    pos = {r: i for i, r in enumerate(ranks)}
    g_trip = [np.prod([trip[pos[r]] for r in members], axis=0).astype(np.float64) for members in groups]
    masks = [sum(1 << g for g, members in enumerate(groups) if set(members) & ix) for ix in indexed]
    return _dp(g_trip, masks, weights, M)


def _groups(live: Sequence[str], indexed: Sequence[frozenset[str]]) -> list[tuple[str, ...]]:
    sig: dict[tuple, list[str]] = {}
    for r in live:
        sig.setdefault(tuple(r in ix for ix in indexed), []).append(r)
    return [tuple(members) for members in sig.values()]


def _dp(g_trip: list[np.ndarray], masks: list[int], weights: np.ndarray, m: int) -> np.ndarray:
    G = len(g_trip)
    full = (1 << G) - 1
    prod = np.ones((full + 1, m), dtype=np.float64)
    for q in range(1, full + 1):
        low = q & -q
        prod[q] = prod[q ^ low] * g_trip[low.bit_length() - 1]
    f = np.full((full + 1, m), np.inf)
    f[0] = 0.0
    for P in sorted(range(full + 1), key=lambda s: bin(s).count("1")):
        for g in range(G):
            if P >> g & 1:
                continue
            Q = P | 1 << g
            add = np.zeros(m)
            for t, mk in enumerate(masks):
                if mk >> g & 1 and not P & mk:
                    add += weights[t] * prod[full & ~(Q | mk)]
            np.minimum(f[Q], f[P] + add, out=f[Q])
    const = sum((weights[t] for t, mk in enumerate(masks) if mk == 0), np.zeros(m))
    return f[full] + const


def brute_force_order(trip: Mapping[str, int], indexed: Sequence[frozenset[str]], weights: Sequence[int]) -> int:
    """Minimum over every permutation: the DP's reference, for tests."""
    from solar_assets.bounds.cache_aware.mapping import refetch_multiplier

    return min(sum(w * refetch_multiplier(order, trip, ix) for w, ix in zip(weights, indexed))
               for order in itertools.permutations(list(trip)))
