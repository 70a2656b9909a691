"""Compiled inner loops of the mapping search (numba): the per-tile element counts of an
enumerated subscript and the per-group Pareto filter.

They ran as NumPy calls once per candidate tuple (``np.unique`` over the loop box) and as three
sorts per filter; on KernelBench they were a third of the cache-aware stage. The counts and the
points kept are the same integers and rows as before (``tests/test_cache_aware_kernels.py``
checks them against a brute force).
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
