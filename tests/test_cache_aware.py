"""Cache-aware bound: the ILP optimum against brute force over the same mapping space, the GEMM
reference figures of DESIGN.md, fused ≤ cache-aware ≤ unfused, monotonicity, memo and failures.

The brute force here counts footprints by listing the elements of every tile (Python sets) and
the refetch multiplier from its definition over every loop permutation: it shares no counting
code with the vectorised frontier, the order DP or the ILP.
"""
from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from ir_schemas import Kernel, Loop, Program, Reshape, TensorDecl
from solar_assets.bounds.cache_aware import (
    CacheAwareError,
    CacheAwareSolver,
    Options,
    cache_aware_traffic,
    capacity_sweep,
    problem_from_graph,
    ski_slope,
    tile_candidates,
)
from solar_assets.bounds.cache_aware.ilp import Candidate, check_termination, select_cover
from solar_assets.bounds.cache_aware.kernels import SEEN_WIDTH
from solar_assets.bounds.cache_aware.order_dp import best_order, brute_force_order, order_cost_of
from solar_assets.bounds.cache_aware.segments import plan_segment, plan_variants
from solar_assets.errors import SolarError
from solar_assets.graph import build_einsum_graph

MIB, GIB = 1 << 20, 1 << 30


# ------------------------------------------------------------------------------------ programs
def _t(name, shape, role="intermediate", pos=0, **kw):
    binding = {"input": f"input:{pos}", "weight": f"param:{name}"}.get(role)
    return TensorDecl(name=name, shape=shape, dtype=kw.pop("dtype", "float32"), role=role, binding=binding, **kw)


def _k(name, loops, out, update, expr, **kw):
    return Kernel(name=name, loops=tuple(Loop(var=v, extent=e) for v, e in loops), out=out, update=update,
                  expr=expr, **kw)


def _graph(name, tensors, steps, inputs, outputs):
    return build_einsum_graph(Program(name=name, tensors=tuple(tensors), inputs=tuple(inputs),
                                      outputs=tuple(outputs), steps=tuple(steps)))


def gemm(M, N, K):
    return _graph("gemm", [_t("A", (M, K), "input"), _t("B", (K, N), "input", 1), _t("C", (M, N), "output")],
                  [_k("mm", [("m", M), ("n", N), ("k", K)], "C[m, n]", "+=", "A[m, k] * B[k, n]")],
                  ["A", "B"], ["C"])


def gemm_bias(M, N, K):
    """The tracer's addmm: the bias written first, then accumulated into (init keep)."""
    return _graph("addmm", [_t("A", (M, K), "input"), _t("B", (K, N), "weight"), _t("bias", (N,), "weight"),
                            _t("C", (M, N), "output")],
                  [_k("bias", [("i", M), ("j", N)], "C[i, j]", "=", "bias[j]"),
                   _k("mm", [("m", M), ("n", N), ("k", K)], "C[m, n]", "+=", "A[m, k] * B[k, n]", init="keep")],
                  ["A"], ["C"])


def conv():
    """Stride 2 and padding 1 on p, padding 1 on q (X is 2×6×3; windows leave it on both sides)."""
    return _graph("conv", [_t("X", (2, 6, 3), "input", pad_value=0.0), _t("W", (2, 2, 3, 2), "weight"),
                           _t("Y", (2, 3, 2), "output")],
                  [_k("conv", [("k", 2), ("p", 3), ("q", 2), ("c", 2), ("r", 3), ("s", 2)], "Y[k, p, q]", "+=",
                      "X[c, p*2 + r - 1, q + s - 1] * W[k, c, r, s]")],
                  ["X"], ["Y"])


def attention(i=4, j=4, d=2, e=3):
    """QKᵀ → softmax (max, exp, sum) → PV → normalise: six einsums."""
    return _graph("attention", [
        _t("Q", (i, d), "input"), _t("K", (j, d), "input", 1), _t("V", (j, e), "input", 2),
        _t("S", (i, j)), _t("M", (i,)), _t("E", (i, j)), _t("L", (i,)), _t("O", (i, e)),
        _t("Y", (i, e), "output")], [
        _k("qk", [("i", i), ("j", j), ("d", d)], "S[i, j]", "+=", "Q[i, d] * K[j, d]"),
        _k("rowmax", [("i", i), ("j", j)], "M[i]", "max=", "S[i, j]"),
        _k("exp", [("i", i), ("j", j)], "E[i, j]", "=", "exp(S[i, j] - M[i])"),
        _k("rowsum", [("i", i), ("j", j)], "L[i]", "+=", "E[i, j]"),
        _k("pv", [("i", i), ("e", e), ("j", j)], "O[i, e]", "+=", "E[i, j] * V[j, e]"),
        _k("norm", [("i", i), ("e", e)], "Y[i, e]", "=", "O[i, e] / L[i]")],
        ["Q", "K", "V"], ["Y"])


# ------------------------------------------------------------------------------------ brute force
def _tile_sets(dims, ranks, tiles, extents):
    """Per tile position of ``ranks``: the set of in-range index tuples it touches (listing them)."""
    grids = [range(0, extents[r], tiles[r]) for r in ranks]
    out = []
    for origin in itertools.product(*grids):
        box = [range(o, min(o + tiles[r], extents[r])) for o, r in zip(origin, ranks)]
        touched = set()
        for point in itertools.product(*box):
            val = dict(zip(ranks, point))
            idx = tuple(d.const + sum(c * val[r] for r, c in d.coefs) for d in dims)
            if all(0 <= v < d.size for v, d in zip(idx, dims)):
                touched.add(idx)
        out.append(touched)
    return out


def _counts(use, tiles, extents):
    """(F, S) by listing: the largest tile's elements, and the sum over tiles (≥ compulsory)."""
    F = S = 0
    for acc in use.accesses:
        ranks = sorted({r for d in acc for r, _ in d.coefs})
        sets = _tile_sets(acc, ranks, tiles, extents)
        F, S = max(F, max(map(len, sets))), max(S, sum(map(len, sets)))
    return F, max(S, use.compulsory)


def _mu(order, trip, indexed, fused):
    live = [k for k, r in enumerate(order) if r in indexed and trip[r] > 1]
    inner = math.prod(trip[r] for r in order[:live[-1]] if r not in indexed) if live else 1
    return math.prod(trip[r] for r in fused if r not in indexed) * inner


def _member_points(e, role, fused_tiles):
    """Every (footprint, traffic) of one member: inner tiles × inner orders, by definition."""
    extents = e.extents
    inner = [r for r, _ in e.ranks if r not in role.fused]
    points = []
    for combo in itertools.product(*[tile_candidates(extents[r]) for r in inner]):
        tiles = dict(zip(inner, combo)) | dict(zip(role.fused, fused_tiles))
        trip = {r: -(-n // tiles[r]) for r, n in extents.items()}
        tensors = []  # (bytes, F, S, indexed, kind)
        for t in e.reads:
            if t.tensor not in role.onchip:
                F, S = _counts(t, tiles, extents)
                tensors.append((t.elem_bytes, F, S, t.ranks(), "in"))
        if not role.out_onchip:
            F, S = _counts(e.out, tiles, extents)
            tensors.append((e.out.elem_bytes, 0 if role.keep_onchip else F, S, e.out.ranks(), "out"))
        fp = sum(b * F for b, F, _, _, _ in tensors)
        best = None
        for order in itertools.permutations(inner):
            cost = 0
            for b, _, S, ix, kind in tensors:
                mu = _mu(order, trip, ix, role.fused)
                cost += b * S * (mu if kind == "in" else 2 * mu - 1 + (1 if e.keep and not role.keep_onchip else 0))
            best = cost if best is None else min(best, cost)
        points.append((fp, best))
    return points


def _region(e, role, use, fused_tiles):
    """(held, moved×φ) of an intermediate or staged input for one shared-tile choice, by listing."""
    tiles = {r: n for r, n in e.ranks} | dict(zip(role.fused, fused_tiles))
    F, S = _counts(use, tiles, e.extents)
    phi = math.prod(-(-e.extents[r] // t) for r, t in zip(role.fused, fused_tiles) if r not in use.ranks())
    return F, S * phi


def brute_segment(plan, capacities):
    """Least traffic of one segment plan per capacity (None: nothing fits), by enumeration."""
    best = [None] * len(capacities)
    for shared in itertools.product(*plan.class_cands):
        resident = [0] * len(plan.einsums)
        fixed = plan.escape_bytes
        for x in plan.intermediates:
            e = plan.einsums[x.producer]
            held, _ = _region(e, plan.roles[x.producer], e.out, shared)
            for k in range(x.producer, x.last + 1):
                resident[k] += x.elem_bytes * held
        for x in plan.staged:
            e = plan.einsums[x.first]
            held, moved = _region(e, plan.roles[x.first], e.read(x.storage), shared)
            fixed += x.elem_bytes * moved
            for k in range(x.first, x.last + 1):
                resident[k] += x.elem_bytes * held
        for x in plan.pinned:  # the whole region, once, held by every member
            fixed += x.elem_bytes * x.compulsory
            for k in range(len(plan.einsums)):
                resident[k] += x.elem_bytes * x.compulsory
        points = [_member_points(e, role, shared) for e, role in zip(plan.einsums, plan.roles)]
        for c, cap in enumerate(capacities):
            total = fixed
            for k, pts in enumerate(points):
                fits = [tr for fp, tr in pts if fp + resident[k] <= cap]
                if not fits:
                    break
                total += min(fits)
            else:
                best[c] = total if best[c] is None else min(best[c], total)
    return best


def brute_force(graph, capacities, max_segment=8):
    """Least traffic per capacity over every cover of the einsums by runs, each run's plans enumerated."""
    problem = problem_from_graph(graph)
    n = len(problem.einsums)
    runs = {}
    for lo in range(n):
        for hi in range(lo, min(n, lo + max_segment)):
            members = tuple(range(lo, hi + 1))
            runs[members] = [brute_segment(p, capacities) for p in plan_variants(problem, members)]
    out = []
    for c in range(len(capacities)):
        best = [0] + [None] * n  # best[i]: einsums [0, i) covered
        for i in range(1, n + 1):
            for lo in range(i):
                options = [v[c] for v in runs.get(tuple(range(lo, i)), []) if v[c] is not None]
                if options and best[lo] is not None:
                    cand = min(options) + best[lo]
                    best[i] = cand if best[i] is None else min(best[i], cand)
        out.append(best[n])
    return out


def _capacities(graph, step=1.3):
    """Geometric capacities from the smallest possible mapping to where everything fits."""
    einsums = problem_from_graph(graph).einsums
    lo = max(sum(t.elem_bytes for t in (*e.reads, e.out)) for e in einsums)
    hi = 2 * sum(t.elem_bytes * t.compulsory for e in einsums for t in (*e.reads, e.out))
    return sorted({int(lo * step**k) for k in range(int(math.log(hi / lo, step)) + 2)})


# ------------------------------------------------------------------------------------ the order DP
def test_order_dp_is_exact_against_every_permutation():
    rng = random.Random(7)
    for _ in range(200):
        ranks = [f"r{i}" for i in range(rng.randint(1, 5))]
        trip = {r: rng.choice([1, 2, 3, 5, 8]) for r in ranks}
        indexed = [frozenset(r for r in ranks if rng.random() < 0.5) for _ in range(rng.randint(1, 4))]
        weights = [rng.randint(1, 99) for _ in indexed]
        cost, order = best_order(trip, indexed, weights)
        assert cost == brute_force_order(trip, indexed, weights)
        assert order_cost_of(trip, indexed, [float(w) for w in weights]) == cost


def test_tile_candidates_are_minimal_tiles_per_trip_count():
    assert tile_candidates(12) == (1, 2, 3, 4, 6, 12)
    assert tile_candidates(1000, "pow2")[-3:] == (250, 500, 1000)  # 256 and 512 shrink to their trip counts
    assert tile_candidates(10, "all") == (1, 2, 3, 4, 5, 10)
    assert len(tile_candidates(8192, "all")) == len({-(-8192 // j) for j in range(1, 8193)})


# ------------------------------------------------------------------------------------ ILP vs brute force
@pytest.mark.parametrize("make", [lambda: gemm_bias(6, 4, 8), conv], ids=["gemm_bias_keep", "conv_stride2_pad1"])
def test_ilp_equals_brute_force_on_gemm_and_conv(make):
    graph = make()
    solver = CacheAwareSolver(Options(ilp_points="all"))  # one binary per fitting frontier point
    caps = _capacities(graph)
    got = [solver.solve(problem_from_graph(graph), cap) for cap in caps]
    assert all(r.proven_optimal for r in got)
    assert all(sum(t.bytes for t in r.per_einsum) == r.bytes for r in got)
    assert [r.bytes for r in got] == brute_force(graph, caps)
    assert len({r.bytes for r in got}) >= 4, "the capacities should cut through the frontier"


def test_ilp_equals_brute_force_on_an_attention_chain():
    graph = attention()
    solver = CacheAwareSolver(Options())
    problem = problem_from_graph(graph)
    plan = plan_segment(problem, tuple(range(6)))
    assert [set(c) for c in plan.classes] == [{"i"}]  # j is reduced by rowmax: not shared
    assert [x.storage for x in plan.intermediates] == ["S", "M", "E", "L", "O"]
    caps = _capacities(graph)
    results = [solver.solve(problem, cap) for cap in caps]
    assert all(r.proven_optimal for r in results)
    assert [r.bytes for r in results] == brute_force(graph, caps)
    presolved = CacheAwareSolver(Options(ilp_presolve_above=0))  # the interval-DP reduction, always on
    assert [presolved.solve(problem, cap).bytes for cap in caps] == [r.bytes for r in results]
    assert all(graph.io_bytes <= r.bytes <= r.unfused_tiled_bytes for r in results)
    assert len({r.bytes for r in results}) >= 4, "the capacities should cut through the frontier"
    assert any(len(r.segments) < 6 for r in results), "some capacity should fuse"
    assert results[-1].bytes == graph.io_bytes  # everything fits: the fused bound


# ------------------------------------------------------------------------------------ known behaviour
def test_cache_aware_bound_sits_between_fused_and_unfused_times():
    from solar_assets.bounds import sol_bounds
    from solar_assets.bounds.cache_aware import cache_aware_bound

    class Spec:  # what a bound needs of a HardwareSpec
        name, dram_bytes_per_s, onchip_buffer_bytes = "toy", 1e9, 1 << 10

        def peak_for(self, dtype):
            return 1e10

        def digest(self):
            return "0" * 12

    graph = attention(8, 8, 4, 4)
    roofline = sol_bounds(graph, Spec())
    bound = cache_aware_bound(graph, Spec())
    assert bound.mode == "cache_aware" and bound.proven_optimal and bound.hardware == roofline.fused.hardware
    assert bound.bytes == cache_aware_traffic(graph, 1 << 10).bytes
    assert roofline.fused.time_s <= bound.time_s <= roofline.unfused.time_s


def test_gemm_8192_reference_figures_from_design():
    g = gemm(8192, 8192, 8192)
    divisor = {c: cache_aware_traffic(g, c * MIB).bytes / GIB for c in (4, 50)}
    assert divisor == {4: 6.25, 50: 1.75}
    any_tile = {c: cache_aware_traffic(g, c * MIB, tiles="all").bytes / GIB for c in (4, 50)}
    assert any_tile == {4: 4.5, 50: 1.5}
    assert cache_aware_traffic(g, 512 * MIB).bytes == g.io_bytes == 0.75 * GIB


def test_gemm_traffic_falls_as_one_over_root_capacity_until_compulsory():
    g = gemm(4096, 4096, 4096)
    slope = ski_slope(g, capacity_sweep(MIB, GIB, per_octave=1), tiles="all")
    traffic = [r.bytes_cache_aware for r in slope.rows]
    assert all(a >= b for a, b in zip(traffic, traffic[1:])), "traffic must not rise with capacity"
    assert traffic[-1] == g.io_bytes
    classical = [2 * 4096**3 / math.sqrt(r.capacity_bytes / 4) * 4 for r in slope.rows]  # 2MNK/√S words
    ratios = [t / c for t, c in zip(traffic, classical) if t > 2 * g.io_bytes]
    assert len(ratios) >= 4 and all(1.0 <= q <= 1.6 for q in ratios), ratios


def test_fused_le_cache_aware_le_unfused_tiled_and_infinite_buffer_limits():
    graph = attention(8, 8, 4, 4)
    for cap in capacity_sweep(1 << 10, 1 << 20, per_octave=1):
        r = cache_aware_traffic(graph, cap)
        assert graph.io_bytes <= r.bytes <= r.unfused_tiled_bytes
    huge = cache_aware_traffic(graph, GIB)
    assert huge.bytes == graph.io_bytes
    no_fusion = cache_aware_traffic(graph, GIB, max_segment=1)
    assert no_fusion.bytes == graph.bytes_unfused == huge.unfused_bytes


def test_elementwise_copy_and_padded_reads_cost_their_compulsory_bytes():
    g = _graph("copy", [_t("X", (8, 4), "input", pad_value=0.0), _t("Y", (4, 8), "output"), _t("Z", (4, 8), "output")],
               [_k("transpose", [("i", 4), ("j", 8)], "Y[i, j]", "=", "X[j, i]"),
                _k("shift", [("i", 4), ("j", 8)], "Z[i, j]", "=", "X[j - 2, i] + Y[i, j]")],
               ["X"], ["Y", "Z"])
    r = cache_aware_traffic(g, 1 << 12, max_segment=1)
    assert [t.bytes for t in r.per_einsum] == [t.compulsory_bytes for t in r.per_einsum]
    assert r.per_einsum[1].compulsory_bytes == 4 * (6 * 4 + 32 + 32)  # X[j - 2, i]: rows 0..5 exist


def test_fusion_follows_reshapes_and_flattened_subscripts():
    g = _graph("bmm_scale", [_t("A", (4, 3, 5), "input"), _t("B", (4, 5, 3), "input", 1), _t("P", (4, 3, 3)),
                             _t("Pv", (2, 2, 3, 3)), _t("Y", (2, 2, 3, 3), "output")],
               [_k("bmm", [("b", 4), ("m", 3), ("n", 3), ("k", 5)], "P[b, m, n]", "+=", "A[b, m, k] * B[b, k, n]"),
                Reshape(name="view", src="P", out="Pv"),
                _k("scale", [("i0", 2), ("i1", 2), ("m", 3), ("n", 3)], "Y[i0, i1, m, n]", "=", "Pv[i0, i1, m, n] * 0.5")],
               ["A", "B"], ["Y"])
    plan = plan_segment(problem_from_graph(g), (0, 1))
    assert sorted(map(sorted, plan.classes)) == [["b.0", "i1"], ["b.1", "i0"], ["m", "m"], ["n", "n"]]
    assert cache_aware_traffic(g, 1 << 20).bytes == g.io_bytes


def test_parts_of_a_concatenation_are_written_and_read_back():
    g = _graph("cat", [_t("A", (4, 8), "input"), _t("B", (4, 8), "input", 1), _t("Y", (8, 8)), _t("Z", (8, 8), "output")],
               [_k("part0", [("i", 4), ("j", 8)], "Y[i, j]", "=", "A[i, j]"),
                _k("part1", [("i", 4), ("j", 8)], "Y[i + 4, j]", "=", "B[i, j]"),
                _k("relu", [("i", 8), ("j", 8)], "Z[i, j]", "=", "max(Y[i, j], 0.0)")],
               ["A", "B"], ["Z"])
    # the mapping model: Y is written by its two parts and read back whole
    r = cache_aware_traffic(problem_from_graph(g), 1 << 20)
    assert r.bytes == g.io_bytes + 2 * 4 * 64
    assert r.bytes == brute_force(g, [1 << 20])[0]
    # but every tensor fits 1 MiB at once, so the bound of the graph is the fused traffic, exactly
    assert cache_aware_traffic(g, 1 << 20).bytes == g.io_bytes


# ------------------------------------------------------------------------------------ memo, sweep, failures
def test_results_are_reused_across_hardware_and_identical_einsums():
    g = _graph("three", [_t("X", (64, 64), "input"), _t("W", (64, 64), "weight"), *(_t(n, (64, 64), "output") for n in "ABC")],
               [_k(n.lower(), [("m", 64), ("n", 64), ("k", 64)], f"{n}[m, n]", "+=", "X[m, k] * W[k, n]") for n in "ABC"],
               ["X"], ["A", "B", "C"])
    solver = CacheAwareSolver(Options())
    first = solver.solve(problem_from_graph(g), 32 << 10)
    assert solver.solve(problem_from_graph(g), 32 << 10) is first  # same capacity: the memo
    assert solver.memo_sizes()["einsum_frontiers"] == 1  # three identical GEMMs, one frontier
    again = solver.solve(problem_from_graph(g), 64 << 10)
    assert again.frontier_seconds == 0.0 and again.bytes <= first.bytes


def test_repeated_blocks_are_planned_once_and_named_after_their_own_einsums():
    def block(k, a, b):  # one step of an unrolled loop: it reads its own slice X[k]
        return [_k(f"scale{k}", [(a, 16), (b, 8)], f"Y{k}[{a}, {b}]", "=", f"X[{k}, {a}, {b}] * 2.0"),
                _k(f"rowsum{k}", [(a, 16), (b, 8)], f"S{k}[{a}]", "+=", f"Y{k}[{a}, {b}]")]

    g = _graph("blocks", [_t("X", (2, 16, 8), "input"), _t("Y0", (16, 8)), _t("S0", (16,), "output"),
                          _t("Y1", (16, 8)), _t("S1", (16,), "output")],
               block(0, "i", "j") + block(1, "p", "q"), ["X"], ["S0", "S1"])
    solver = CacheAwareSolver(Options(max_segment=2))
    r = solver.solve(problem_from_graph(g), 256)
    assert [t.name for t in r.per_einsum] == ["scale0", "rowsum0", "scale1", "rowsum1"]
    assert set(r.per_einsum[2].tiles) == {"p", "q"} and set(r.per_einsum[2].order) <= {"p", "q"}
    assert solver.memo_sizes()["runs"] == 4  # each block's single einsums and run once; the run across blocks
    assert r.bytes == brute_force(g, [256], max_segment=2)[0]


def test_ski_slope_rows_csv_png(tmp_path):
    slope = ski_slope(attention(), capacity_sweep(1 << 10, 1 << 16, per_octave=1))
    caps = [r.capacity_bytes for r in slope.rows]
    assert caps[0] == 1 << 10 and caps[-1] == 1 << 16
    traffic = [r.bytes_cache_aware for r in slope.rows]
    assert all(a >= b for a, b in zip(traffic, traffic[1:]))
    csv = slope.write_csv(tmp_path / "slope.csv").read_text().splitlines()
    assert csv[0].startswith("capacity_bytes,bytes_cache_aware") and len(csv) == len(caps) + 1
    assert slope.write_png(tmp_path / "slope.png", {"tiny": 4096}).read_bytes()[:4] == b"\x89PNG"
    assert capacity_sweep()[0] == 64 << 10 and capacity_sweep()[-1] == GIB


def test_a_forced_cover_needs_no_solve_and_a_choice_still_gets_glpk(monkeypatch):
    """One candidate per einsum is the only cover: taken as is, no glpsol run. Where two covers
    compete, GLPK picks the cheaper, as a hand count says (fused run 7 < 5 + 4)."""
    import pyomo.opt

    forced = [Candidate(0, 0, (0,), 10, 5.0), Candidate(1, 0, (1, 2), 20, 7.0)]
    solves = []
    real = pyomo.opt.SolverFactory("glpk").__class__.solve
    monkeypatch.setattr(pyomo.opt.SolverFactory("glpk").__class__, "solve",
                        lambda self, *a, **k: solves.append(1) or real(self, *a, **k))
    sel = select_cover(3, forced, 100)
    assert sel.objective == 12.0 and sel.proven_optimal and set(sel.chosen) == set(forced) and solves == []
    choice = [Candidate(0, 0, (0,), 10, 5.0), Candidate(1, 0, (1,), 10, 5.0), Candidate(2, 0, (2,), 10, 4.0),
              Candidate(3, 0, (1, 2), 20, 7.0)]
    sel = select_cover(3, choice, 100)
    assert sel.objective == 12.0 and {c.segment for c in sel.chosen} == {0, 3} and solves == [1]


def test_missing_glpsol_infeasible_and_time_limit_are_clear_errors():
    g = problem_from_graph(gemm(8, 8, 8))  # the mapping model itself (a graph that fits needs no solver)
    with pytest.raises(CacheAwareError, match="glpsol.*not found.*unfused and fused bounds are unaffected"):
        cache_aware_traffic(g, 1 << 20, glpsol="/nonexistent/glpsol")
    with pytest.raises(CacheAwareError, match=r"infeasible at a 8 B buffer: einsum 'mm' needs at least 12 B"):
        cache_aware_traffic(g, 8)
    assert issubclass(CacheAwareError, SolarError)
    with pytest.raises(CacheAwareError, match="w at a 100 B buffer: the selection model is infeasible"):
        select_cover(2, [Candidate(0, 0, (0,), 10, 5.0)], 100, where="w")  # nothing covers einsum 1

    class Results:  # what Pyomo reports when glpsol stops at --tmlim with an incumbent
        class solver:
            termination_condition = None

    from pyomo.opt import TerminationCondition as TC

    for tc, text in ((TC.feasible, "time limit"), (TC.maxTimeLimit, "time limit"), (TC.infeasible, "infeasible")):
        Results.solver.termination_condition = tc
        with pytest.raises(CacheAwareError, match=text):
            check_termination(Results, "w", 1 << 20, 5)


@pytest.mark.parametrize("make", [conv, attention, lambda: gemm_bias(6, 10, 12)])
def test_the_frontier_kernel_keeps_a_tensors_terms_only_while_its_ranks_stand(make, monkeypatch):
    """``kernels.frontier_points`` recomputes a tensor's terms only when a rank they depend on
    moved: every tuple of a range is the same, to the bit, as that tuple enumerated alone (where
    every term is computed afresh)."""
    from solar_assets.bounds.cache_aware import frontier as frontier_module
    from solar_assets.bounds.cache_aware.kernels import frontier_points

    calls = []
    monkeypatch.setattr(frontier_module, "frontier_points", lambda *a: calls.append(a) or frontier_points(*a))
    cache_aware_traffic(make(), 64, solver=CacheAwareSolver(Options()))
    assert calls
    for lo, hi, _seen, *args in calls:
        every = np.full((0, SEEN_WIDTH), np.inf)  # no tuple skipped: all of them, in order
        tau, fp, tr, rows = frontier_points(lo, hi, every, *args)
        assert rows.tolist() == list(range(hi - lo))
        alone = [frontier_points(u, u + 1, every, *args) for u in range(lo, hi)]
        assert tau.tolist() == [int(a[0][0]) for a in alone]
        assert fp.tolist() == [int(a[1][0]) for a in alone]
        assert tr.tobytes() == np.concatenate([a[2] for a in alone]).tobytes()


def _frontiers_of(make, monkeypatch, skip: bool) -> list:
    from solar_assets.bounds.cache_aware import frontier as frontier_module
    from solar_assets.bounds.cache_aware import segments as segments_module
    from solar_assets.bounds.cache_aware.kernels import new_seen

    made = []

    def spy(*a, **kw):
        made.append(frontier_module.einsum_frontier(*a, **kw))
        return made[-1]

    monkeypatch.setattr(segments_module, "einsum_frontier", spy)
    monkeypatch.setattr(frontier_module, "new_seen", new_seen if skip else (lambda n_tau: new_seen(n_tau, 0)))
    cache_aware_traffic(make(), 64, solver=CacheAwareSolver(Options()))
    return made


@pytest.mark.parametrize("make", [conv, attention, lambda: gemm_bias(6, 10, 12), lambda: gemm(24, 20, 36)])
def test_skipping_the_order_dp_of_dominated_tuples_changes_no_frontier(make, monkeypatch):
    """A tuple whose τ already has a tuple of smaller footprint moving no more than the tuple's
    least possible traffic (every tensor fetched once) skips the loop-order DP: every frontier is
    the same, point for point, tuple for tuple and to the bit, as with every tuple computed; and
    some tuples are skipped (the enumeration computed fewer DPs)."""
    from solar_assets.bounds.cache_aware import frontier as frontier_module
    from solar_assets.bounds.cache_aware.kernels import frontier_points

    computed = {True: 0, False: 0}
    for skip in (True, False):
        def counting(*a, skip=skip):
            out = frontier_points(*a)
            computed[skip] += out[3].size
            return out

        monkeypatch.setattr(frontier_module, "frontier_points", counting)
        if skip:
            skipped = _frontiers_of(make, monkeypatch, True)
        else:
            every = _frontiers_of(make, monkeypatch, False)
    assert len(skipped) == len(every) > 0
    for a, b in zip(skipped, every):
        assert a.tuples == b.tuples
        for field in ("tau", "fp", "tr", "tuple_id"):
            assert getattr(a, field).tobytes() == getattr(b, field).tobytes(), field
    assert computed[True] < computed[False]
