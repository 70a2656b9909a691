"""The einsum graph: footprints, MACs, FLOPs and bytes checked against numbers worked by hand."""
from __future__ import annotations

import itertools
import random

import pytest

import solar_assets.graph.footprint as fp_mod
from ir_schemas import Reshape
from solar_assets.errors import IRError
from solar_assets.graph import (
    access_footprint,
    build_einsum_graph,
    footprint_of,
    touched_elements,
    union_footprint,
)

from ir_programs import access, attention, conv2d, gemm, kernel, program, tensor


def brute_force(acc, extents, shape):
    names = sorted(extents)
    seen = set()
    for point in itertools.product(*(range(extents[v]) for v in names)):
        env = dict(zip(names, point))
        idx = tuple(a.const + sum(c * env[v] for v, c in a.coefs) for a in acc.index)
        if all(0 <= i < s for i, s in zip(idx, shape)):
            seen.add(idx)
    return seen


# ------------------------------------------------------------------------------------------
# footprints


def test_padding_counts_only_in_range_elements():
    # X[i - 1] for i < 7 over 5 elements: subscripts -1..5, in range 0..4
    assert access_footprint(access("X", ({"i": 1}, -1)), {"i": 7}, (5,)) == 5
    # a 3-tap window at stride 1 with padding 1 over 4 outputs covers the 4 real elements
    assert access_footprint(access("X", ({"p": 1, "r": 1}, -1)), {"p": 4, "r": 3}, (4,)) == 4
    # entirely in the padding: nothing is read
    assert access_footprint(access("X", ({"i": 1}, -3)), {"i": 3}, (5,)) == 0
    assert access_footprint(access("X", ({}, 7)), {"i": 3}, (5,)) == 0


def test_strided_and_windowed_progressions():
    assert access_footprint(access("X", ({"i": 3}, 1)), {"i": 4}, (12,)) == 4         # 1, 4, 7, 10
    assert access_footprint(access("X", ({"i": -2}, 9)), {"i": 5}, (10,)) == 5        # 9, 7, 5, 3, 1
    # window p*s + q: min((P-1)s + Q, P*Q)
    assert access_footprint(access("X", ({"p": 2, "q": 1}, 0)), {"p": 5, "q": 3}, (20,)) == 4 * 2 + 3
    assert access_footprint(access("X", ({"p": 4, "q": 1}, 0)), {"p": 5, "q": 3}, (20,)) == 5 * 3
    # stride 3, window 2, padding 1 over 9: {-1,0, 2,3, 5,6, 8,9} -> {0,2,3,5,6,8}
    assert access_footprint(access("X", ({"p": 3, "r": 1}, -1)), {"p": 4, "r": 2}, (9,)) == 6


def test_constant_and_unit_extent_subscripts():
    acc = access("X", ({}, 2), ({"i": 1, "j": 5}, 0))
    assert access_footprint(acc, {"i": 4, "j": 1}, (3, 4)) == 4


def test_diagonal_access():
    assert access_footprint(access("X", ({"i": 1}, 0), ({"i": 1}, 0)), {"i": 5}, (5, 5)) == 5
    assert access_footprint(access("X", ({"i": 1}, 0), ({"i": 1}, 1)), {"i": 5}, (5, 5)) == 4  # padded
    assert access_footprint(access("X", ({"i": 1}, 0), ({"i": 2}, 0)), {"i": 4}, (4, 8)) == 4
    # X[i, i + j]: a band, one element per (i, j)
    assert access_footprint(access("X", ({"i": 1}, 0), ({"i": 1, "j": 1}, 0)), {"i": 3, "j": 2}, (3, 4)) == 6


def test_large_accesses_are_exact_without_enumeration():
    n = 10**8
    diag = footprint_of(access("X", ({"i": 1}, 0), ({"i": 1}, -1)), {"i": n}, (n, n))
    assert diag.elements == n - 1 and diag.exact
    window = footprint_of(access("X", ({"p": 2, "q": 1}, 0)), {"p": n, "q": 3}, (2 * n + 1,))
    assert window.elements == 2 * (n - 1) + 3 and window.exact
    flat = footprint_of(access("X", ({"i": 4096, "j": 1}, 0)), {"i": 10**5, "j": 4096}, (4096 * 10**5,))
    assert flat.elements == 4096 * 10**5 and flat.exact
    conv = footprint_of(access("X", ({"p": 2, "r": 1}, -1), ({"q": 2, "s": 1}, -1)),
                        {"p": 4096, "r": 3, "q": 4096, "s": 3}, (8192, 8192))
    assert conv.elements == 8192 * 8192 and conv.exact


def _random_access(rng):
    names = [f"v{i}" for i in range(rng.randint(1, 4))]
    extents = {v: rng.randint(1, 6) for v in names}
    rank = rng.randint(1, 3)
    dims = []
    for _ in range(rank):
        used = rng.sample(names, rng.randint(0, min(len(names), 3)))
        dims.append(({v: rng.choice([-3, -2, -1, 1, 1, 2, 3, 5]) for v in used}, rng.randint(-3, 3)))
    shape = tuple(rng.randint(1, 12) for _ in range(rank))
    return access("X", *dims), extents, shape


def test_footprints_match_brute_force():
    rng = random.Random(0)
    for _ in range(1500):
        acc, extents, shape = _random_access(rng)
        want = brute_force(acc, extents, shape)
        got = footprint_of(acc, extents, shape)
        assert (got.elements, got.exact) == (len(want), True), (str(acc), extents, shape)
        touched = touched_elements(acc, extents, shape)
        strides = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * shape[d + 1]
        assert sorted(touched.tolist()) == sorted(sum(i * s for i, s in zip(t, strides)) for t in want)


def test_fallbacks_never_overcount(monkeypatch):
    """Beyond the enumeration limits a count is exact or a lower bound, never more."""
    monkeypatch.setattr(fp_mod, "ENUMERATION_LIMIT", 2)
    monkeypatch.setattr(fp_mod, "BITMAP_LIMIT", 2)
    monkeypatch.setattr(fp_mod, "SUB_BOX_POINTS", 2)
    rng = random.Random(1)
    lower = 0
    for _ in range(1500):
        acc, extents, shape = _random_access(rng)
        want = len(brute_force(acc, extents, shape))
        got = footprint_of(acc, extents, shape)
        assert got.elements <= want, (str(acc), extents, shape)
        assert got.elements == want or not got.exact
        lower += not got.exact
    assert lower > 0  # the fallbacks were exercised


def test_union_of_accesses_matches_brute_force():
    rng = random.Random(2)
    for _ in range(300):
        items = []
        for _ in range(rng.randint(1, 3)):
            acc, extents, shape = _random_access(rng)
            items.append((acc, extents, shape))
        shape = items[0][2]
        items = [(a, e, s) for a, e, s in items if s == shape]
        want = set().union(*(brute_force(a, e, s) for a, e, s in items))
        assert union_footprint(items).elements == len(want)


def test_union_of_shifted_reads():
    ext = {"i": 10}
    items = [(access("X", ({"i": 1}, 0)), ext, (12,)), (access("X", ({"i": 1}, 2)), ext, (12,))]
    assert union_footprint(items).elements == 12
    assert union_footprint(items[:1] * 2).elements == 10


# ------------------------------------------------------------------------------------------
# nodes


def test_gemm_counts():
    M, N, K = 64, 48, 32
    g = build_einsum_graph(gemm(M, N, K))
    (node,) = g.nodes
    assert (node.macs, node.flops) == (M * N * K, 2 * M * N * K)
    assert node.bytes == 4 * (M * K + K * N + M * N)
    assert {t: op.elements for t, op in node.reads.items()} == {"A": M * K, "B": K * N}
    assert (node.write.tensor, node.write.elements) == ("C", M * N)
    assert node.ranks == {"m": M, "n": N, "k": K}
    assert node.text == "for m<64, n<48, k<32: C[m, n] += A[m, k] * B[k, n]"
    assert (g.macs, g.flops, g.bytes_unfused, g.io_bytes) == (M * N * K, 2 * M * N * K, node.bytes, node.bytes)
    assert g.dtype == "float32"


def test_gemm_bytes_follow_the_dtype():
    g = build_einsum_graph(gemm(16, 16, 16, dtype="bfloat16"))
    assert g.bytes_unfused == 2 * 3 * 16 * 16 and g.dtype == "bfloat16"


@pytest.mark.parametrize(
    "stride, pad, R, H, in_rows",
    [
        (1, 1, 3, 8, 8),   # every row
        (2, 1, 3, 8, 8),   # rows 2p + r - 1 in [-1, 7]: all 8
        (3, 1, 2, 9, 6),   # {-1,0, 2,3, 5,6, 8,9} -> {0,2,3,5,6,8}
        (2, 0, 1, 8, 4),   # 1x1 stride 2 skips odd rows: {0,2,4,6}
    ],
)
def test_conv2d_input_footprint_and_macs(stride, pad, R, H, in_rows):
    N, C, K = 2, 3, 4
    g = build_einsum_graph(conv2d(N, C, H, H, K, R, R, stride, pad))
    (node,) = g.nodes
    P = (H + 2 * pad - R) // stride + 1
    assert node.macs == N * K * P * P * C * R * R
    assert node.flops == 2 * node.macs
    assert node.reads["X"].elements == N * C * in_rows * in_rows
    assert node.reads["Wt"].elements == K * C * R * R
    assert node.write.elements == N * K * P * P
    assert node.bytes == 4 * (N * C * in_rows**2 + K * C * R * R + N * K * P * P)


def test_conv2d_hand_numbers():
    g = build_einsum_graph(conv2d(N=2, C=3, H=8, W=8, K=4, R=3, S=3, stride=2, pad=1))
    assert g.macs == 2 * 4 * 4 * 4 * 3 * 3 * 3 == 3456
    assert g.nodes[0].reads["X"].elements == 384


def test_attention_counts_by_hand():
    B, H, L, D = 2, 3, 8, 4
    g = build_einsum_graph(attention(B, H, L, D))
    node = {n.name: n for n in g.nodes}
    assert node["qk"].macs == node["pv"].macs == B * H * L * L * D
    assert g.macs == 2 * B * H * L * L * D
    ops = {"qk": 2, "rowmax": 1, "expo": 3, "rowsum": 1, "norm": 1, "pv": 2}  # expo: *, -, exp
    iters = {"qk": B * H * L * L * D, "pv": B * H * L * L * D}
    for name, per in ops.items():
        assert node[name].flops == iters.get(name, B * H * L * L) * per, name
    assert g.flops == 4 * B * H * L * L * D + 6 * B * H * L * L
    bhld, bhll, bhl = B * H * L * D, B * H * L * L, B * H * L
    assert node["qk"].bytes == 4 * (2 * bhld + bhll)
    assert node["rowmax"].bytes == 4 * (bhll + bhl)
    assert node["expo"].bytes == 4 * (bhll + bhl + bhll)
    assert node["norm"].bytes == 4 * (bhll + bhl + bhll)
    assert node["pv"].bytes == 4 * (bhll + 2 * bhld)
    assert g.io_bytes == 4 * 4 * bhld
    assert g.io_bytes < g.bytes_unfused
    edges = {(a, b): d["tensors"] for a, b, d in g.nx.edges(data=True)}
    assert edges == {("qk", "rowmax"): ("S",), ("qk", "expo"): ("S",), ("rowmax", "expo"): ("m",),
                     ("expo", "rowsum"): ("E",), ("expo", "norm"): ("E",), ("rowsum", "norm"): ("l",),
                     ("norm", "pv"): ("P",)}


def test_repeated_reads_of_one_tensor_merge():
    p = program([kernel("k", [("i", 10)], "Y[i]", "=", "X[i] * X[i] + X[i + 2]")],
                [tensor("X", (12,), "input"), tensor("Y", (10,), "output")])
    (node,) = build_einsum_graph(p).nodes
    assert node.reads["X"].elements == 12 and node.reads["X"].exact
    assert node.inputs == ("X",)


def test_keep_reads_the_written_region_identity_does_not():
    p = program(
        [kernel("first", [("i", 8)], "Y[i]", "=", "X[i] * 2.0"),
         kernel("acc", [("i", 8), ("j", 3)], "Y[i]", "+=", "W[j] * X[i]", init="keep"),
         kernel("fresh", [("i", 8), ("j", 3)], "Z[i]", "+=", "W[j] * Y[i]")],
        [tensor("X", (8,), "input"), tensor("W", (3,), "weight"), tensor("Y", (8,), "output"),
         tensor("Z", (8,), "output")])
    g = build_einsum_graph(p)
    acc, fresh = g.node("acc"), g.node("fresh")
    assert set(acc.reads) == {"W", "X", "Y"} and acc.reads["Y"].elements == 8
    assert acc.bytes == 4 * (3 + 8 + 8 + 8)
    assert set(fresh.reads) == {"W", "Y"} and fresh.bytes == 4 * (3 + 8 + 8)
    assert g.nx.has_edge("first", "acc") and g.nx.has_edge("acc", "fresh")
    assert not g.nx.has_edge("first", "fresh")  # 'acc' redefined Y


def test_reshape_moves_nothing_and_resolves_storage():
    p = program(
        [Reshape(name="flat", src="X", out="Xf"),
         kernel("scale", [("i", 24)], "Z[i]", "=", "Xf[i] * 2.0"),
         Reshape(name="view", src="Z", out="Zv")],
        [tensor("X", (4, 6), "input"), tensor("Xf", (24,)), tensor("Z", (24,)), tensor("Zv", (4, 6), "output")])
    g = build_einsum_graph(p)
    flat = g.node("flat")
    assert (flat.kind, flat.macs, flat.flops, flat.bytes, flat.reads, flat.write) == ("reshape", 0, 0, 0, {}, None)
    assert g.storage_of == {"X": "X", "Xf": "X", "Z": "Z", "Zv": "Z"}
    assert g.nx.edges["flat", "scale"] == {"tensors": ("Xf",), "storages": ("X",)}
    assert g.nx.edges["scale", "view"] == {"tensors": ("Z",), "storages": ("Z",)}
    assert g.bytes_unfused == g.node("scale").bytes == 4 * 48
    assert g.io_bytes == g.io_bytes_declared == 4 * 48  # X in, Z (seen as Zv) out


def test_output_aliasing_an_input_counts_once():
    p = program(
        [kernel("inc", [("i", 4), ("j", 6)], "Z[i, j]", "=", "X[i, j] + 1.0"),
         Reshape(name="view", src="X", out="O")],
        [tensor("X", (4, 6), "input"), tensor("Z", (4, 6), "output"), tensor("O", (24,), "output")])
    g = build_einsum_graph(p)
    assert set(g.io) == {"X", "Z"}
    assert g.io_bytes == g.io_bytes_declared == 4 * (24 + 24)


def test_a_partly_read_input_costs_only_what_is_read():
    p = program([kernel("even", [("i", 4)], "Y[i]", "=", "X[i*2]")],
                [tensor("X", (8,), "input"), tensor("Y", (4,), "output")])
    g = build_einsum_graph(p)
    assert g.io_bytes == 4 * (4 + 4) and g.io_bytes_declared == 4 * (8 + 4)
    assert g.io_bytes <= g.bytes_unfused


def test_dominant_dtype_by_traffic():
    p = program([kernel("cast", [("i", 8), ("j", 8)], "Y[i, j]", "=", "X[i, j] * 2.0"),
                 kernel("sum", [("i", 8), ("j", 8)], "Z[i]", "+=", "Y[i, j]")],
                [tensor("X", (8, 8), "input", "float16"), tensor("Y", (8, 8), dtype="float16"),
                 tensor("Z", (8,), "output", "float32")])
    assert build_einsum_graph(p).dtype == "float16"


def test_invalid_program_is_rejected_by_the_checker():
    bad = program([kernel("k", [("i", 4)], "Y[i]", "=", "X[i + 1]")],
                  [tensor("X", (4,), "input"), tensor("Y", (4,), "output")])
    with pytest.raises(IRError, match="no pad_value"):
        build_einsum_graph(bad)


def test_digest_is_the_program_content():
    a, b = build_einsum_graph(gemm(8, 8, 8)), build_einsum_graph(gemm(8, 8, 8))
    assert a.digest() == b.digest() and len(a.digest()) == 64
    assert build_einsum_graph(gemm(8, 8, 4)).digest() != a.digest()


def test_dot_and_png(tmp_path):
    g = build_einsum_graph(attention(1, 1, 4, 2))
    dot = g.to_dot()
    assert dot.startswith('digraph "attention" {') and '"qk" -> "rowmax" [label="S"];' in dot
    png = g.draw_png(tmp_path / "attention.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
