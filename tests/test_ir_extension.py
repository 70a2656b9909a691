"""The IR extension: indirect subscripts, Repeat and TopK through schema, checker, printer,
executor, einsum graph and bounds (see docs/interfaces.md, "IR extension")."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ir_programs import kernel, program, tensor
from ir_schemas import Cond, Program, Repeat, TopK
from solar_assets.bounds import sol_bounds
from solar_assets.bounds.cache_aware import cache_aware_traffic
from solar_assets.errors import IRError
from solar_assets.execute import ExecutionError, execute_program
from solar_assets.graph import build_einsum_graph
from solar_assets.ir import check_program, format_program

SCHEMA = Path(__file__).resolve().parents[1] / "ir_schemas" / "affine_loop_ir.v1.schema.json"


def gather_program(N=5, V=7, C=3):
    return program([kernel("g", [("n", N), ("c", C)], "O[n, c]", "=", "X[I[n] + 1, c] * 2")],
                   [tensor("X", (V, C), "input", pos=0), tensor("I", (N,), "input", dtype="int64", pos=1),
                    tensor("O", (N, C), "output")], name="gather")


def scatter_add_program(N=5, V=7, C=3):
    return program([kernel("cp", [("v", V), ("c", C)], "Y[v, c]", "=", "X[v, c]"),
                    kernel("sc", [("n", N), ("c", C)], "Y[I[n], c]", "+=", "S[n, c]", init="keep")],
                   [tensor("X", (V, C), "input", pos=0), tensor("I", (N,), "input", dtype="int64", pos=1),
                    tensor("S", (N, C), "input", pos=2), tensor("Y", (V, C), "output")], name="scatter")


def rnn_program(T=4, B=2, H=3):
    """h_{t+1} = tanh(h_t @ W + x_t), all hidden states kept in Hs[t]."""
    body = (kernel("mm", [("b", B), ("j", H), ("k", H)], "G[b, j]", "+=", "Hs[t, b, k] * W[k, j]"),
            kernel("act", [("b", B), ("j", H)], "Hs[t + 1, b, j]", "=", "tanh(G[b, j] + X[t, b, j])"))
    return program([kernel("h0", [("b", B), ("j", H)], "Hs[0, b, j]", "=", "0.0"),
                    Repeat(name="steps", var="t", extent=T, steps=body)],
                   [tensor("X", (T, B, H), "input", pos=0), tensor("W", (H, H), "weight"), tensor("G", (B, H)),
                    tensor("Hs", (T + 1, B, H), "output")], name="rnn")


def topk_program(k=2, largest=True):
    return program([TopK(name="tk", src="S", axis=1, k=k, largest=largest, values="V", indices="J")],
                   [tensor("S", (3, 5), "input", pos=0), tensor("V", (3, k), "output"),
                    tensor("J", (3, k), "output", dtype="int64")], name="topk")


# ------------------------------------------------------------------ schema, checker, printer
def test_schema_round_trips_and_is_committed():
    p = Program.model_validate_json(rnn_program().model_dump_json())
    assert p == rnn_program()
    kinds = json.loads(SCHEMA.read_text())["$defs"]
    assert {"Repeat", "TopK", "Kernel", "Reshape"} <= set(kinds)


def test_printer_shows_repeat_body_and_topk():
    text = format_program(rnn_program())
    assert "  steps: repeat t<4:\n    mm: for b<2, j<3, k<3: G[b, j] += Hs[t, b, k] * W[k, j]" in text
    assert "tk: V, J = topk(S, k=2, axis=1, largest)" in format_program(topk_program())
    assert "O[n, c] = X[I[n] + 1, c] * 2" in format_program(gather_program())


@pytest.mark.parametrize("expr, message", [
    ("X[F[n], c]", "index tensor must have an integer dtype"),
    ("X[I[I[n]], c]", "nested indirection"),
    ("X[2 * I[n], c]", "one index read plus an optional affine offset"),
    ("X[I[n + 1], c]", r"subscript 0 of I\[n \+ 1\] ranges over \[1, 5\] but I has extent 5"),
])
def test_checker_rejects_bad_indirect_subscripts(expr, message):
    p = program([kernel("g", [("n", 5), ("c", 3)], "O[n, c]", "=", expr)],
                [tensor("X", (7, 3), "input", pos=0), tensor("I", (5,), "input", dtype="int64", pos=1),
                 tensor("F", (5,), "input", pos=2), tensor("O", (5, 3), "output")])
    with pytest.raises(IRError, match=message):
        check_program(p, "bad.json")


def test_checker_wants_init_keep_for_an_indirect_accumulation():
    p = scatter_add_program()
    steps = (p.steps[0], p.steps[1].model_copy(update={"init": "identity"}))
    with pytest.raises(IRError, match="must use init 'keep'"):
        check_program(p.model_copy(update={"steps": steps}))


def test_checker_bounds_repeat_variable_over_the_whole_repeat():
    p = rnn_program()
    rep = p.steps[1]
    bad = rep.model_copy(update={"extent": 5})  # t + 1 reaches 5 in Hs of extent 5; X has extent 4
    with pytest.raises(IRError, match=r"ranges over \[0, 4\] but Hs has extent 5|ranges over \[1, 5\]"):
        check_program(p.model_copy(update={"steps": (p.steps[0], bad)}))


def test_checker_rejects_a_bad_topk():
    p = topk_program()
    with pytest.raises(IRError, match="k=9 exceeds the extent 5"):
        check_program(p.model_copy(update={"steps": (p.steps[0].model_copy(update={"k": 9}),)}))


# ------------------------------------------------------------------ executor vs numpy
@pytest.mark.parametrize("einsum", [True, False])
def test_gather_scatter_add_match_numpy(einsum):
    rng = np.random.default_rng(0)
    X, S, I = rng.random((7, 3)), rng.random((5, 3)), np.array([0, 5, 2, 2, 1])
    (o,) = execute_program(gather_program(), {"input:0": X, "input:1": I}, einsum=einsum)
    np.testing.assert_allclose(o, X[I + 1] * 2)
    (y,) = execute_program(scatter_add_program(), {"input:0": X, "input:1": I, "input:2": S}, einsum=einsum)
    ref = X.copy()
    np.add.at(ref, I, S)  # repeated indices accumulate
    np.testing.assert_allclose(y, ref)


def test_out_of_range_index_is_an_error_not_a_wrap():
    with pytest.raises(ExecutionError, match="indirect subscript 0 of a read out of range"):
        execute_program(gather_program(), {"input:0": np.zeros((7, 3)), "input:1": np.array([0, 6, 1, 1, 1])})


@pytest.mark.parametrize("einsum", [True, False])
def test_repeat_matches_numpy_recurrence(einsum):
    rng = np.random.default_rng(1)
    X, W = rng.random((4, 2, 3)), rng.random((3, 3))
    (hs,) = execute_program(rnn_program(), {"input:0": X, "param:W": W}, einsum=einsum)
    h, ref = np.zeros((2, 3)), [np.zeros((2, 3))]
    for t in range(4):
        h = np.tanh(h @ W + X[t])
        ref.append(h)
    np.testing.assert_allclose(hs, np.stack(ref), rtol=1e-12)


@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_a_stable_sort(largest):
    S = np.array([[1.0, 3.0, 3.0, 0.5, 2.0], [5.0, 4.0, 3.0, 2.0, 1.0], [0.0, 0.0, 1.0, 1.0, 0.0]])
    v, j = execute_program(topk_program(3, largest), {"input:0": S})
    order = np.argsort(-S if largest else S, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(j, order)
    np.testing.assert_array_equal(v, np.take_along_axis(S, order, axis=1))


# ------------------------------------------------------------------ graph and bounds by hand
def test_graph_counts_repeat_multiplicity_by_hand():
    T, B, H = 4, 2, 3
    g = build_einsum_graph(rnn_program(T, B, H))
    mm, act = g.node("mm"), g.node("act")
    assert (mm.repeat, mm.macs, mm.flops) == (T, T * B * H * H, 2 * T * B * H * H)
    # per iteration: Hs[t] B*H, W H*H, G B*H (write), float32
    assert mm.bytes == 4 * T * (B * H + H * H + B * H)
    assert act.flops == T * B * H * 2  # tanh and +
    # fused: X, W and Hs once each (Hs over all T + 1 rows)
    assert g.io_bytes == 4 * (T * B * H + H * H + (T + 1) * B * H)
    assert list(g.nx.edges) == [("h0", "mm"), ("mm", "act")]  # no loop-carried back edge


def test_graph_indirect_footprints_by_hand():
    """A gather reads at least one row (all lookups may hit it) and at most min(rows, lookups):
    the graph charges the fewest, so the bounds stay lower bounds whatever the indices."""
    from solar_assets.graph.footprint import indirect_footprint_upper

    g = build_einsum_graph(gather_program(N=5, V=7, C=3))
    node = g.node("g")
    assert node.reads["X"].elements == 3 and not node.reads["X"].exact  # one row of C = 3
    assert node.reads["I"].elements == 5
    pk = node.parsed
    x = next(a for a in pk.reads if a.tensor == "X")
    assert indirect_footprint_upper(x, pk.extents, (7, 3)).elements == min(7 * 3, 5 * 3)
    assert indirect_footprint_upper(x, {**pk.extents, "n": 20}, (7, 3)).elements == 7 * 3  # capped
    s = build_einsum_graph(scatter_add_program())
    assert s.node("sc").write.elements == 3  # one row of the scatter target, at the least


def test_graph_topk_node():
    g = build_einsum_graph(topk_program())
    n = g.node("tk")
    assert (n.kind, n.flops, n.bytes) == ("topk", 0, 4 * 15 + 4 * 6 + 8 * 6)


@pytest.mark.parametrize("make", [rnn_program, gather_program, scatter_add_program, topk_program])
def test_bounds_ordering_fused_le_cache_aware_le_unfused(make):
    from solar_assets.hardware import load_hardware

    g = build_einsum_graph(make())
    hw = load_hardware("H100_SXM")
    b = sol_bounds(g, hw)
    assert b.fused.time_s <= b.unfused_graph.time_s <= b.unfused.time_s
    assert g.io_bytes <= g.bytes_unfused
    small = cache_aware_traffic(g, 64)
    assert g.io_bytes <= small.bytes  # never below fused, even where the buffer forces re-reads
    roomy = cache_aware_traffic(g, 1 << 20)  # everything fits: never above the unfused traffic
    # (a gather's achievable traffic takes one row per lookup, its graph counts the fewest rows)
    assert g.io_bytes <= roomy.bytes <= roomy.unfused_bytes
    assert roomy.unfused_bytes == g.bytes_unfused or make is gather_program


# ------------------------------------------------------------------ Cond (value-dependent branch)
def cond_program(N=4, K=6, cheap_second=False, outs=("Y",), second_writes="Y"):
    """Y = (X @ W) if P[0] else 2 * X (branch order swapped with ``cheap_second``)."""
    dear = (kernel("mm", [("n", N), ("j", K), ("k", K)], "Y[n, j]", "+=", "X[n, k] * W[k, j]"),)
    cheap = (kernel("dbl", [("n", N), ("j", K)], f"{second_writes}[n, j]", "=", "X[n, j] * 2"),)
    branches = (dear, cheap) if cheap_second else (cheap, dear)
    return program([kernel("idx", [], "I[()]", "=", "P[0]"),
                    Cond(name="sw", index="I", branches=branches, outs=outs)],
                   [tensor("X", (N, K), "input", pos=0), tensor("P", (1,), "input", dtype="int64", pos=1),
                    tensor("W", (K, K), "weight"), tensor("I", (), dtype="int64"), tensor("Z", (N, K)),
                    tensor("Y", (N, K), "output")], name="cond")


def test_cond_round_trips_and_prints_both_branches():
    p = cond_program()
    assert Program.model_validate_json(p.model_dump_json()) == p
    assert "Cond" in json.loads(SCHEMA.read_text())["$defs"]
    text = format_program(p)
    assert "sw: Y = switch I:" in text and "case 0:" in text and "case 1:" in text
    assert "      dbl: for n<4, j<6: Y[n, j] = X[n, j] * 2" in text
    assert [s.name for s, _ in p.walk_steps()] == ["idx", "sw", "dbl", "mm"]


def test_checker_rejects_bad_conds():
    with pytest.raises(IRError, match="branch 1 does not write its result 'Y'"):
        check_program(cond_program(second_writes="Z", cheap_second=True))
    bad_index = cond_program().model_copy(update={"steps": (cond_program().steps[1].model_copy(
        update={"index": "X"}),)})
    with pytest.raises(IRError, match="index 'X' must be a rank-0 integer"):
        check_program(bad_index)
    no_index = cond_program().model_copy(update={"steps": cond_program().steps[1:]})
    with pytest.raises(IRError, match="reads its index 'I' before any step writes it"):
        check_program(no_index)


@pytest.mark.parametrize("einsum", [True, False])
def test_executor_runs_only_the_selected_branch(einsum):
    p = cond_program()
    x, w = np.arange(24.0).reshape(4, 6) / 7, np.eye(6) * 3
    for sel, want in ((0, x * 2), (1, x @ w), (5, x @ w), (-2, x * 2)):  # clamped like lax.switch
        (y,) = execute_program(p, {"input:0": x, "input:1": np.array([sel]), "param:W": w}, einsum=einsum)
        np.testing.assert_allclose(y, want)


@pytest.mark.parametrize("cheap_second", [False, True])
def test_graph_keeps_the_cheaper_branch(cheap_second):
    g = build_einsum_graph(cond_program(cheap_second=cheap_second))
    assert g.conds == {"sw": 1 if cheap_second else 0}
    assert g.macs == 0 and g.flops == 24 and "mm" not in [n.name for n in g.nodes]
    # I/O: X, P and Y once; W is only read by the dearer branch
    assert g.io_bytes == 4 * 24 + 8 * 1 + 4 * 24


def test_graph_keeps_no_branch_when_none_is_cheaper_in_everything():
    """Branch 0 computes more but moves less: no branch is below the other in all counts, so the
    cond contributes nothing (still a lower bound of either)."""
    N, K = 4, 6
    compute = (kernel("sq", [("n", N), ("j", K)], "Y[n, j]", "=", "tanh(exp(X[n, j]) * X[n, j] + 1.0) * 2.0"),)
    move = (kernel("cp", [("n", N), ("j", K)], "Y[n, j]", "=", "B[n, j] + C[n, j]"),)
    p = program([kernel("idx", [], "I[()]", "=", "P[0]"), Cond(name="sw", index="I", branches=(compute, move),
                                                              outs=("Y",))],
                [tensor("X", (N, K), "input", pos=0), tensor("P", (1,), "input", dtype="int64", pos=1),
                 tensor("B", (N, K), "weight"), tensor("C", (N, K), "weight"), tensor("I", (), dtype="int64"),
                 tensor("Y", (N, K), "output")], name="tradeoff")
    g = build_einsum_graph(p)
    assert g.conds == {"sw": None}
    assert [n.name for n in g.nodes] == ["idx"]


def test_cond_bounds_stay_lower_bounds_and_cache_aware_is_fused_io():
    from solar_assets.hardware import load_hardware

    p = cond_program()
    g = build_einsum_graph(p)
    b = sol_bounds(g, load_hardware("H100_SXM"))
    assert b.fused.time_s <= b.unfused_graph.time_s <= b.unfused.time_s
    assert cache_aware_traffic(g, 1 << 20).bytes == g.io_bytes
    for sel in (0, 1):  # each branch alone, as a program without the cond: never below the kept one
        branch = p.steps[1].branches[sel]
        alone = build_einsum_graph(p.model_copy(update={"steps": (p.steps[0], *branch)}))
        assert (g.flops, g.bytes_unfused, g.io_bytes) <= (alone.flops, alone.bytes_unfused, alone.io_bytes)
        assert g.flops <= alone.flops and g.bytes_unfused <= alone.bytes_unfused and g.io_bytes <= alone.io_bytes
