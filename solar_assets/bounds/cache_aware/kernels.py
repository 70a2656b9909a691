"""Compiled inner loops of the mapping search (numba): the per-tile element counts of an
enumerated subscript (``tile_counts``), each tile tuple's footprint and traffic under its best
loop order (``frontier_points``, ``order_cost``) and the per-group Pareto filter
(``undominated_hint``, ``pareto_rows``).

They ran as NumPy calls once per candidate tuple (``np.unique`` over the loop box), as a dozen
temporaries per chunk of tuples and as three sorts per filter: most of the cache-aware stage on
KernelBench. The counts, frontiers and rows kept are the same integers and float bits as before
(``tests/test_cache_aware_kernels.py`` checks them against brute force; docs/cold_path.md, fifth
session, against the NumPy code on 5,083 KernelBench einsums).
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def tile_counts(grid: np.ndarray, key: np.ndarray, keyspace: int, tuples: np.ndarray,
                extents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """For each row of ``tuples`` (one tile per rank): the most distinct ``key`` values in one tile
    of the loop box (F) and their sum over the tiles (S).

    ``grid`` holds the box points' rank indices (ranks × points), ``key`` the element each point
    touches, densely numbered below ``keyspace``. Points are bucketed by tile (a counting sort),
    then each tile's distinct keys are counted with a stamp per key: no hashing, no sort.
    """
    n_tuples, n_ranks = tuples.shape
    m = key.size
    F = np.zeros(n_tuples, dtype=np.int64)
    S = np.zeros(n_tuples, dtype=np.int64)
    if m == 0:
        return F, S
    tid = np.empty(m, dtype=np.int64)
    order = np.empty(m, dtype=np.int64)
    stamp = np.empty(keyspace, dtype=np.int64)
    trips = np.empty(n_ranks, dtype=np.int64)
    for u in range(n_tuples):
        n_tiles = 1
        for i in range(n_ranks):
            trips[i] = (extents[i] + tuples[u, i] - 1) // tuples[u, i]
            n_tiles *= trips[i]
        for p in range(m):
            t = 0
            for i in range(n_ranks):
                t = t * trips[i] + grid[i, p] // tuples[u, i]
            tid[p] = t
        start = np.zeros(n_tiles + 1, dtype=np.int64)
        for p in range(m):
            start[tid[p] + 1] += 1
        for t in range(n_tiles):
            start[t + 1] += start[t]
        fill = start[:-1].copy()
        for p in range(m):
            order[fill[tid[p]]] = p
            fill[tid[p]] += 1
        stamp[:] = -1
        most = 0
        total = 0
        for t in range(n_tiles):
            distinct = 0
            for j in range(start[t], start[t + 1]):
                k = key[order[j]]
                if stamp[k] != t:
                    stamp[k] = t
                    distinct += 1
            total += distinct
            if distinct > most:
                most = distinct
        F[u] = most
        S[u] = total
    return F, S


@numba.njit(cache=True, nogil=True)
def pareto_rows(order: np.ndarray, group: np.ndarray, fp: np.ndarray, tr: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """The rows kept by the per-group Pareto filter, in (group, fp) order.

    ``order`` sorts the rows by (group, fp), ties in any order. Of each (group, fp) run the
    least-traffic row is the candidate (the first row among equal traffic); it is kept when it
    is its group's first or moves strictly less than every row kept before it in the group.
    """
    n = order.size
    keep = np.empty(n, dtype=np.int64)
    kept = 0
    i = 0
    best_tr = np.inf
    while i < n:
        a = order[i]
        g = group[a]
        f = fp[a]
        best = a
        j = i + 1
        while j < n and group[order[j]] == g and fp[order[j]] == f:
            b = order[j]
            if tr[b] < tr[best] or (tr[b] == tr[best] and b < best):
                best = b
            j += 1
        first = i == 0 or group[order[i - 1]] != g
        if first or tr[best] < best_tr:
            keep[kept] = best
            kept += 1
            best_tr = tr[best]
        i = j
    return keep[:kept]


@numba.njit(cache=True, nogil=True)
def frontier_points(lo: int, hi: int, seen: np.ndarray, shape: np.ndarray, cand: np.ndarray, extents: np.ndarray,
                    tau_pos: np.ndarray, tau_stride: np.ndarray,
                    t_bytes: np.ndarray, t_compulsory: np.ndarray, t_fp: np.ndarray, t_weight: np.ndarray,
                    t_unread: np.ndarray, t_acc: np.ndarray, a_live: np.ndarray, a_comp: np.ndarray,
                    c_table: np.ndarray, c_rank: np.ndarray, c_ranks: np.ndarray, tab_F: np.ndarray,
                    tab_S: np.ndarray, t_phi: np.ndarray, g_rank: np.ndarray, g_ranks: np.ndarray,
                    step_p: np.ndarray, step_q: np.ndarray, step_terms: np.ndarray, term_t: np.ndarray,
                    term_q: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """τ id, buffer bytes and DRAM bytes of the tile tuples ``lo .. hi`` (flat, C order over the
    candidate grid ``shape``) that may be Pareto points, and their offsets from ``lo``: the
    arithmetic of ``frontier.einsum_frontier`` per tuple, in the same operation order, so the
    floats are the same bits.

    ``seen`` (``new_seen``; zero rows: every tuple computed) carries, per τ, the least traffic of
    the tuples computed so far by footprint bucket, across the calls of one enumeration. A
    tuple skips the loop-order DP when a tuple of its τ in a lower bucket (a strictly smaller
    footprint) moves no more than the tuple's least possible traffic, every tensor fetched once
    (``order_cost`` charges each weight once, times trips ≥ 1: Σ weight is below every order's
    cost, float rounding included while it is below ``EXACT_BELOW``). Such a tuple is dominated, as
    is all it would dominate, so the Pareto points are those of every tuple
    (``tests/test_cache_aware.py``). (A floor counting the outermost loop's re-fetches skipped 3 %
    more of the DPs on 20 level-2 files and cost more than it saved.)

    Tensor t (DRAM reads, then the output): accesses ``t_acc[t] .. t_acc[t+1]``; access a: live
    flag and components ``a_comp[a] .. a_comp[a+1]``; component c: its table's offset in
    ``tab_F``/``tab_S`` and ranks ``c_ranks[c_rank[c] .. c_rank[c+1]]``. ``t_fp``: whether its
    footprint counts; ``t_weight``: 1 for a read, 2 for the output (read and written back);
    ``t_unread``: the output, written without being read first (not accumulated into), so one of
    its fetches is not charged (``-b``); ``t_phi[t, k]``: the
    shared loop ``tau_pos[k]`` re-fetches t. Loop-order DP: groups of inner ranks
    ``g_ranks[g_rank[g] .. g_rank[g+1]]`` and the steps of ``order_dp.dp_layout``.

    A tensor's terms (footprint, bytes, weight) are computed again only when a rank they depend
    on moved: in C order the innermost rank moves at every tuple, the outer ones rarely, so a
    tensor that does not index the innermost ranks keeps its terms for a whole run of tuples
    (the same values: they are functions of those ranks' indices alone).
    """
    n = hi - lo
    R = shape.size
    T = t_bytes.size
    G = g_rank.size - 1
    full = (1 << G) - 1
    tau = np.zeros(n, dtype=np.int64)
    fp = np.zeros(n, dtype=np.int64)
    tr = np.empty(n, dtype=np.float64)
    idx = np.empty(R, dtype=np.int64)
    trip = np.empty(R, dtype=np.int64)
    weight = np.empty(T, dtype=np.float64)
    t_fp_bytes = np.zeros(T, dtype=np.int64)  # per tensor: its footprint term, kept while its ranks stay
    t_b = np.zeros(T, dtype=np.float64)  # per tensor: its bytes b, kept likewise
    t_last = np.full(T, -1, dtype=np.int64)  # per tensor: the last rank position its terms depend on
    for t in range(T):
        for a in range(t_acc[t], t_acc[t + 1]):
            for c in range(a_comp[a], a_comp[a + 1]):
                for j in range(c_rank[c], c_rank[c + 1]):
                    t_last[t] = max(t_last[t], c_ranks[j])
        for k in range(tau_pos.size):
            if t_phi[t, k]:
                t_last[t] = max(t_last[t], tau_pos[k])
    g_trip = np.empty(G, dtype=np.float64)
    prod = np.empty(full + 1, dtype=np.float64)
    f = np.empty(full + 1, dtype=np.float64)
    trips = np.empty_like(cand)  # per rank and candidate: the trip count
    keep = np.empty(n, dtype=np.int64)
    kept = 0
    pruning = seen.shape[0] > 0
    for r in range(R):
        for i in range(shape[r]):
            trips[r, i] = -(-extents[r] // cand[r, i])
    rest = lo
    for r in range(R - 1, -1, -1):
        idx[r] = rest % shape[r]
        rest //= shape[r]
    changed = 0  # the outermost rank position whose index moved since the last tuple
    for u in range(n):
        if u:  # the next tuple in C order: an odometer step
            r = R - 1
            idx[r] += 1
            while idx[r] == shape[r] and r > 0:
                idx[r] = 0
                r -= 1
                idx[r] += 1
            changed = r
        for r in range(changed, R):
            trip[r] = trips[r, idx[r]]
        for k in range(tau_pos.size):
            tau[u] += idx[tau_pos[k]] * tau_stride[k]
        const = 0.0
        for t in range(T):
            if u == 0 or t_last[t] >= changed:  # else its ranks kept their indices: its terms stand
                F = 0
                S = 0
                for a in range(t_acc[t], t_acc[t + 1]):
                    fa = a_live[a]
                    sa = a_live[a]
                    for c in range(a_comp[a], a_comp[a + 1]):
                        flat = 0
                        for j in range(c_rank[c], c_rank[c + 1]):
                            p = c_ranks[j]
                            flat = flat * shape[p] + idx[p]
                        fa *= tab_F[c_table[c] + flat]
                        sa *= tab_S[c_table[c] + flat]
                    F = max(F, fa)
                    S = max(S, sa)
                S = max(S, t_compulsory[t])
                t_fp_bytes[t] = t_bytes[t] * F if t_fp[t] else 0
                b = np.float64(t_bytes[t]) * np.float64(S)
                phi = 1.0
                for k in range(tau_pos.size):
                    if t_phi[t, k]:
                        phi *= np.float64(trip[tau_pos[k]])
                weight[t] = (t_weight[t] * b) * phi
                t_b[t] = b
            fp[u] += t_fp_bytes[t]
            if t_unread[t]:
                const -= t_b[t]
        bucket = 0
        if pruning:
            bucket = _bucket(fp[u]) + 1  # the Fenwick index of fp's bucket
            least = 0.0  # below every order's cost: each tensor fetched once
            for t in range(T):
                least += weight[t]
            if least < EXACT_BELOW:
                floor = least + const
                below = np.inf  # the least traffic of this τ in the buckets below
                j = bucket - 1
                while j > 0:
                    below = min(below, seen[tau[u], j])
                    j -= j & -j
                if below <= floor:
                    continue
        for g in range(G):
            m = 1
            for j in range(g_rank[g], g_rank[g + 1]):
                m *= trip[g_ranks[j]]
            g_trip[g] = np.float64(m)
        tr[u] = order_cost(weight, g_trip, step_p, step_q, step_terms, term_t, term_q, free, prod, f) + const
        keep[kept] = u
        kept += 1
        if pruning:
            j = bucket
            while j < seen.shape[1]:
                if tr[u] < seen[tau[u], j]:
                    seen[tau[u], j] = tr[u]
                j += j & -j
    rows = keep[:kept]
    return tau[rows], fp[rows], tr[rows], rows


@numba.njit(cache=True, nogil=True)
def order_cost(weight: np.ndarray, g_trip: np.ndarray, step_p: np.ndarray, step_q: np.ndarray,
               step_terms: np.ndarray, term_t: np.ndarray, term_q: np.ndarray, free: np.ndarray,
               prod: np.ndarray, f: np.ndarray) -> float:  # pragma: no cover - compiled
    """``order_dp``'s DP over subsets of loop groups (trips ``g_trip``), its steps unrolled by
    ``order_dp.dp_layout``; ``prod`` and ``f`` scratch of 2^G. The least Σ weight·μ over loop
    orders (a step adds its starting tensors' weights times the trips of ``term_q``'s groups)."""
    G = g_trip.size
    full = (1 << G) - 1
    prod[0] = 1.0
    for q in range(1, full + 1):
        low = q & -q
        bit = 0
        while (1 << bit) != low:
            bit += 1
        prod[q] = prod[q ^ low] * g_trip[bit]
    f[: full + 1] = np.inf
    f[0] = 0.0
    for s in range(step_p.size):
        add = 0.0
        for j in range(step_terms[s], step_terms[s + 1]):
            add += weight[term_t[j]] * prod[term_q[j]]
        cost = f[step_p[s]] + add
        if cost < f[step_q[s]]:
            f[step_q[s]] = cost
    rest = 0.0
    for t in free:
        rest += weight[t]
    return f[full] + rest


SUB_BUCKETS = 4
"""Footprint buckets per power of two in ``undominated_hint`` and ``frontier_points``."""
SEEN_WIDTH = 64 * SUB_BUCKETS + 1
"""Columns of a ``seen`` table: every footprint bucket, 1-based (a Fenwick tree of minima)."""
EXACT_BELOW = float(1 << 53)
"""Below it, sums of integer-valued floats are exact."""


def new_seen(n_tau: int, max_cells: int = 1 << 22) -> np.ndarray:
    """A ``seen`` table for one enumeration of ``n_tau`` τ groups, or an empty one (no skipping)
    where it would exceed ``max_cells``."""
    if n_tau * SEEN_WIDTH > max_cells:
        return np.full((0, SEEN_WIDTH), np.inf)
    return np.full((n_tau, SEEN_WIDTH), np.inf)


@numba.njit(cache=True, nogil=True)
def _bucket(x: int) -> int:  # pragma: no cover - compiled
    """A monotone bucket of a non-negative integer: its bit length and the next two bits."""
    if x <= 0:
        return 0
    n = 0
    y = x
    while y > 0:
        y >>= 1
        n += 1
    frac = (x >> (n - 3)) & 3 if n >= 3 else (x << (3 - n)) & 3
    return n * SUB_BUCKETS + frac


@numba.njit(cache=True, nogil=True)
def undominated_hint(tau: np.ndarray, fp: np.ndarray, tr: np.ndarray, n_tau: int) -> np.ndarray:  # pragma: no cover - compiled
    """Rows not dominated by any row of the same τ in a lower footprint bucket: the input of the
    exact Pareto filter, cut before its sort.

    A row dropped here has a row of its τ with a strictly smaller footprint and no more traffic,
    which also dominates everything the dropped row dominates, so the Pareto points of the rows
    kept are those of all rows (the identical-row tie-break never meets a dropped row: its
    dominator's footprint differs).
    """
    n = tau.size
    lo = hi = _bucket(fp[0]) if n else 0
    for i in range(n):
        b = _bucket(fp[i])
        lo = min(lo, b)
        hi = max(hi, b)
    width = hi - lo + 1
    if n_tau * width > 4 * n:  # the table would cost more than the sort it saves
        return np.arange(n)
    best = np.full((n_tau, width), np.inf)
    for i in range(n):
        b = _bucket(fp[i]) - lo
        if tr[i] < best[tau[i], b]:
            best[tau[i], b] = tr[i]
    for g in range(n_tau):  # best[g, b]: the least traffic in buckets below b
        run = np.inf
        for b in range(width):
            here = best[g, b]
            best[g, b] = run
            if here < run:
                run = here
    keep = np.empty(n, dtype=np.int64)
    kept = 0
    for i in range(n):
        if tr[i] < best[tau[i], _bucket(fp[i]) - lo]:
            keep[kept] = i
            kept += 1
    return keep[:kept]
