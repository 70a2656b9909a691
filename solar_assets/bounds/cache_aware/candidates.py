"""What goes into the selection ILP at one capacity, and the exact reductions that keep it small.

Every candidate segment (an einsum on its own, or a fused run, plain or staged) has a Pareto
frontier of (need, traffic) points. At a capacity C:

1. a segment's points that fit (need ≤ C, exact integers) are Pareto-sorted, so all but the last
   cover the same einsums with more traffic (``points="best"`` keeps only that one);
2. of two plans of one run, the costlier is dropped;
3. a run is dropped when splitting it into two candidate runs costs no more (the parts are
   shorter, so the argument nests down to single einsums, which are never dropped);
4. on large graphs (more than ``presolve_above`` candidates left) a run is dropped when even the
   best covers of what lies before and after it cannot make a cover through it optimal: with
   F(i) the least cost of covering einsums [0, i) and G(i) of [i, n), a run [a, b) survives only
   if F(a) + cost + G(b) = F(n), the least total (interval DP over the same candidates).

None of these changes the optimum; the ILP then chooses among what is left.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solar_assets.bounds.cache_aware.ilp import Candidate
from solar_assets.bounds.cache_aware.segments import SegmentFrontier

_BIG = 1 << 44  # key = segment·_BIG + need (needs under 16 TiB)


@dataclass(frozen=True)
class CandidateTable:
    """Every segment frontier of a workload flattened for vectorised lookups (built once)."""

    segments: tuple[SegmentFrontier, ...]
    members: tuple[tuple[int, ...], ...]  # where each segment is placed (its plan may be another run's)
    lo: np.ndarray  # first einsum of each segment
    length: np.ndarray  # einsums in each segment
    offsets: np.ndarray  # start of each segment's points in the flat arrays (one more at the end)
    keys: np.ndarray  # segment·_BIG + need, ascending
    traffic: np.ndarray
    n_einsums: int

    @classmethod
    def build(cls, placed: Sequence[tuple[SegmentFrontier, tuple[int, ...]]], n_einsums: int) -> CandidateTable:
        """From (segment frontier, the einsums it covers) pairs."""
        segments = [sf for sf, _ in placed]
        members = tuple(m for _, m in placed)
        sizes = np.array([sf.need.size for sf in segments], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        seg = np.repeat(np.arange(len(segments), dtype=np.int64), sizes)
        need = np.concatenate([sf.need for sf in segments]) if segments else np.zeros(0, np.int64)
        if need.size and int(need.max()) >= _BIG:
            raise ValueError("a segment needs 16 TiB or more of buffer: beyond the candidate table's keys")
        traffic = np.concatenate([sf.traffic for sf in segments]) if segments else np.zeros(0)
        lo = np.array([m[0] for m in members], dtype=np.int64)
        length = np.array([len(m) for m in members], dtype=np.int64)
        return cls(tuple(segments), members, lo, length, offsets, seg * _BIG + need, traffic, n_einsums)

    def candidates(self, capacity: int, points: str = "best", presolve_above: int = 4000) -> list[Candidate]:
        """The ILP's candidates at ``capacity`` after the exact reductions of the module doc."""
        S = len(self.segments)
        seg = np.arange(S, dtype=np.int64)
        last = np.searchsorted(self.keys, seg * _BIG + capacity, side="right") - 1  # least-traffic fitting point
        fits = last >= self.offsets[:-1]
        cost = np.where(fits, self.traffic[np.maximum(last, 0)], np.inf)
        n, L = self.n_einsums, int(self.length.max(initial=1))
        best = np.full((n + 1, L + 1), np.inf)  # best[a, l]: cheapest plan of run [a, a + l)
        np.minimum.at(best, (self.lo, self.length), cost)
        # 2. the first plan reaching the run's best
        order = np.lexsort((seg, self.length, self.lo))
        first = np.zeros(S, dtype=bool)
        reached = cost[order] <= best[self.lo[order], self.length[order]]
        run = self.lo[order] * (L + 1) + self.length[order]
        seen: set[int] = set()
        for i, r, ok in zip(order.tolist(), run.tolist(), reached.tolist()):
            if ok and r not in seen:
                seen.add(r)
                first[i] = True
        keep = fits & first
        # 3. split dominance: split[a, l] = min_k best[a, k] + best[a + k, l − k]
        split = np.full_like(best, np.inf)
        for length in range(2, L + 1):
            a = np.arange(0, n - length + 1)
            for k in range(1, length):
                np.minimum(split[a, length], best[a, k] + best[a + k, length - k], out=split[a, length])
        multi = self.length > 1
        keep &= ~(multi & (cost >= split[self.lo, self.length]))
        # 4. interval-DP bound on large graphs
        if int(keep.sum()) > presolve_above:
            kept = np.full_like(best, np.inf)
            np.minimum.at(kept, (self.lo[keep], self.length[keep]), cost[keep])
            F, G = _prefix(kept, n, L), _suffix(kept, n, L)
            total = F[self.lo] + cost + G[np.minimum(self.lo + self.length, n)]
            keep &= total <= F[n] * (1 + 1e-12)
        out = []
        for s in np.flatnonzero(keep).tolist():
            sf = self.segments[s]
            first_point = int(self.offsets[s]) if points == "all" else int(last[s])
            for j in range(first_point, int(last[s]) + 1):
                k = j - int(self.offsets[s])
                out.append(Candidate(s, k, self.members[s], int(sf.need[k]), float(sf.traffic[k])))
        return out

    def singles_cost(self, capacity: int) -> int | None:
        """Σ over einsums of their own least traffic at ``capacity`` (None: one does not fit)."""
        seg = np.flatnonzero(self.length == 1)
        last = np.searchsorted(self.keys, seg * _BIG + capacity, side="right") - 1
        if np.any(last < self.offsets[seg]):
            return None
        return int(self.traffic[last].sum())


def _prefix(best: np.ndarray, n: int, L: int) -> np.ndarray:
    F = np.full(n + 1, np.inf)
    F[0] = 0.0
    for i in range(1, n + 1):
        lengths = np.arange(1, min(L, i) + 1)
        F[i] = np.min(F[i - lengths] + best[i - lengths, lengths])
    return F


def _suffix(best: np.ndarray, n: int, L: int) -> np.ndarray:
    G = np.full(n + 1, np.inf)
    G[n] = 0.0
    for i in range(n - 1, -1, -1):
        lengths = np.arange(1, min(L, n - i) + 1)
        G[i] = np.min(best[i, lengths] + G[i + lengths])
    return G
