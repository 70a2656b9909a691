"""The compiled counting and Pareto kernels of the mapping search against brute force."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from solar_assets.bounds.cache_aware.frontier import pareto, pareto_by_group
from solar_assets.bounds.cache_aware.kernels import tile_counts
from solar_assets.bounds.cache_aware.mapping import Dim, component_table


def _brute_counts(points: list[tuple[int, ...]], keys: list[int], tiles: tuple[int, ...]) -> tuple[int, int]:
    per_tile: dict[tuple[int, ...], set[int]] = {}
    for p, k in zip(points, keys):
        per_tile.setdefault(tuple(i // t for i, t in zip(p, tiles)), set()).add(k)
    sizes = [len(s) for s in per_tile.values()]
    return (max(sizes), sum(sizes)) if sizes else (0, 0)


@pytest.mark.parametrize("seed", range(6))
def test_tile_counts_match_a_set_per_tile(seed: int) -> None:
    rng = np.random.default_rng(seed)
    extents = tuple(int(x) for x in rng.integers(1, 9, size=int(rng.integers(1, 4))))
    points = [p for p in itertools.product(*(range(n) for n in extents)) if rng.random() < 0.8]
    keys = [int(x) for x in rng.integers(0, 11, size=len(points))]
    tuples = list(itertools.product(*({1, 2, 3, n} for n in extents)))
    grid = np.array(points, dtype=np.int64).T.reshape(len(extents), -1).copy()
    F, S = tile_counts(grid, np.array(keys, dtype=np.int64), 11, np.array(tuples, dtype=np.int64),
                       np.array(extents, dtype=np.int64))
    assert [(int(f), int(s)) for f, s in zip(F, S)] == [_brute_counts(points, keys, t) for t in tuples]


def test_component_table_of_a_sliding_window() -> None:
    """x[i + k] with i < 6, k < 3 (a 1-d convolution's input): tile (ti, tk) touches ti + tk - 1
    elements when both divide evenly; hand-counted here for every tuple of {1, 2, 3, 6} × {1, 3}."""
    dim = Dim(((("i", 1), ("k", 1))), 0, 8)
    tab = component_table((dim,), (6, 3), ((1, 2, 3, 6), (1, 3)), ("i", "k"))
    expected_F = [1, 3, 2, 4, 3, 5, 6, 8]  # ti + tk - 1
    # S: (6/ti)·(3/tk) tiles of ti + tk - 1 elements each: with tk = 1 always 18
    expected_S = [18, 18, 18, 12, 18, 10, 18, 8]
    assert tab.F.tolist() == expected_F
    assert tab.S.tolist() == expected_S
    assert tab.exact


def _dominance_reference(group, fp, tr):
    """Kept rows: no other row of the group is at least as good in both and better in one; of
    identical rows the first."""
    keep = []
    for i in range(len(fp)):
        beaten = any(group[j] == group[i] and fp[j] <= fp[i] and tr[j] <= tr[i]
                     and ((fp[j], tr[j]) != (fp[i], tr[i]) or j < i) for j in range(len(fp)) if j != i)
        if not beaten:
            keep.append(i)
    return sorted(keep, key=lambda i: (group[i], fp[i]))


@pytest.mark.parametrize("seed", range(8))
def test_pareto_by_group_keeps_exactly_the_undominated_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    group = rng.integers(0, 4, size=n).astype(np.int64)
    fp = rng.integers(0, 40, size=n).astype(np.int64)
    tr = rng.integers(0, 40, size=n).astype(np.float64)  # many ties on purpose
    payload = np.arange(n, dtype=np.int64)
    g, f, t, rows = pareto_by_group(group, fp, tr, payload)
    assert rows.tolist() == _dominance_reference(group, fp, tr)
    assert (f == fp[rows]).all() and (t == tr[rows]).all() and (g == group[rows]).all()


def test_pareto_by_group_with_group_ids_too_large_for_one_key() -> None:
    group = np.array([1 << 40, 1 << 40, 3, 1 << 40], dtype=np.int64)
    fp = np.array([1 << 30, 5, 7, 1 << 31], dtype=np.int64)
    tr = np.array([1.0, 2.0, 9.0, 1.0])
    g, f, t, rows = pareto_by_group(group, fp, tr, np.arange(4))
    assert rows.tolist() == [2, 1, 0]


def test_pareto_single_group() -> None:
    fp, tr, rows = pareto(np.array([4, 1, 2, 2, 8]), np.array([1.0, 5.0, 5.0, 3.0, 1.0]), np.arange(5))
    assert (fp.tolist(), tr.tolist(), rows.tolist()) == ([1, 2, 4], [5.0, 3.0, 1.0], [1, 3, 0])


@pytest.mark.parametrize("seed", range(6))
def test_the_bucket_prefilter_keeps_every_pareto_point(seed: int) -> None:
    """Rows dropped before the sort are dominated: the Pareto points of the kept rows are those
    of all rows, ties and identical rows included."""
    from solar_assets.bounds.cache_aware.kernels import undominated_hint

    rng = np.random.default_rng(seed)
    n, n_tau = 5000, 3
    tau = rng.integers(0, n_tau, size=n).astype(np.int64)
    fp = (rng.integers(1, 1 << 12, size=n) * rng.choice([1, 1 << 10], size=n)).astype(np.int64)
    tr = rng.integers(0, 200, size=n).astype(np.float64)
    rows = undominated_hint(tau, fp, tr, n_tau)
    assert rows.size < n // 2  # it does cut
    everything = pareto_by_group(tau, fp, tr, np.arange(n))
    kept = pareto_by_group(tau[rows], fp[rows], tr[rows], rows)
    for a, b in zip(everything, kept):
        assert np.array_equal(a, b)


def test_footprint_buckets_are_monotone() -> None:
    from solar_assets.bounds.cache_aware.kernels import _bucket

    xs = list(range(0, 70)) + [2**k + d for k in range(6, 62) for d in (-1, 0, 1)]
    buckets = [_bucket(x) for x in sorted(xs)]
    assert buckets == sorted(buckets)
    assert _bucket(4) < _bucket(7) < _bucket(8)  # four buckets per power of two
