"""The shared concepts of the graph and the bounds, each checked against an independent count:
the subscript type (``ir.expr.Dim``), the nested distinct-sums rule, the union-find and the one
program digest."""
from __future__ import annotations

import itertools
import random

from ir_schemas import Kernel, Loop, Program, TensorDecl
from solar_assets.graph.footprint import distinct_sums, nested_sums
from solar_assets.graph.union_find import DisjointSets, connected, group_sharing
from solar_assets.ir import program_digest
from solar_assets.ir.expr import Affine, Dim, row_major


def _brute_sums(terms):
    return len({sum(c * t for c, t in zip((c for c, _ in terms), ts))
                for ts in itertools.product(*(range(n) for _, n in terms))})


def test_distinct_sums_is_exact_when_it_says_so_and_never_above_the_true_count():
    rng = random.Random(12)
    exact_seen = inexact_seen = 0
    for _ in range(400):
        terms = [(rng.choice([-6, -3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 12]), rng.randint(1, 5))
                 for _ in range(rng.randint(1, 4))]
        count, exact = distinct_sums(terms)
        truth = _brute_sums(terms)
        assert count <= truth, terms
        if exact:
            assert count == truth, terms
            exact_seen += 1
        else:
            inexact_seen += 1
    assert exact_seen > 100 and inexact_seen > 0


def test_nested_sums_of_a_sliding_window_and_a_flattening():
    # p*2 + r, p < 4, r < 3: values 0..8, all nine of them; (P-1)s + Q = 3*2 + 3
    g, count, span, step, exact = nested_sums([(1, 3), (2, 4)])
    assert (g, count, span, step, exact) == (1, 9, 8, 1, True)
    # i*5 + k, i < 3, k < 5: a mixed-radix flattening, 15 values
    assert distinct_sums([(5, 3), (1, 5)]) == (15, True)
    assert distinct_sums([(3, 0), (1, 4)]) == (0, True)  # an empty loop
    assert distinct_sums([(0, 7), (4, 1)]) == (1, True)  # nothing moves


def test_dim_keeps_live_terms_and_is_an_affine():
    ext = {"p": 4, "r": 3, "u": 1}
    d = Dim.of(Affine((("p", 2), ("r", 1), ("u", 5), ("z", 0)), -1), 8, {**ext, "z": 9})
    assert isinstance(d, Affine)
    assert d.coefs == (("p", 2), ("r", 1)) and d.const == -1 and d.size == 8
    assert d.vars == ("p", "r")
    assert d.range(ext) == (-1, 7)  # 2*3 + 2 - 1
    assert not d.in_range(ext)
    assert Dim.of(Affine((("p", 2), ("r", 1)), 0), 9, ext).in_range(ext)  # 0 .. 8
    assert str(d) == "p*2 + r - 1"


def test_row_major_offset_is_the_flat_index_of_the_tuple():
    ext = {"i": 3, "j": 4, "k": 2}
    dims = (Dim((("i", 1),), 0, 3), Dim((("j", 1), ("k", 2)), 1, 7), Dim((("k", 1), ("i", -1)), 2, 5))
    lin = row_major(dims)
    assert lin.size == 3 * 7 * 5
    for i, j, k in itertools.product(range(3), range(4), range(2)):
        at = {"i": i, "j": j, "k": k}
        idx = [d.const + sum(c * at[v] for v, c in d.coefs) for d in dims]
        flat = (idx[0] * 7 + idx[1]) * 5 + idx[2]  # row-major by hand
        assert lin.const + sum(c * at[v] for v, c in lin.coefs) == flat
    assert all(d.in_range(ext) for d in dims)
    assert row_major((Dim((("i", 1),), 0, 4), Dim((("i", -4),), 0, 4))).coefs == ()  # cancels


def test_union_find_groups_and_connectivity():
    items = [("a", "b"), ("c",), ("b", "d"), (), ("c", "e")]
    assert group_sharing(items, lambda x: x) == [[0, 2], [1, 4], [3]]
    assert connected(4, [(0, 1), (2, 3), (1, 2)])
    assert not connected(4, [(0, 1), (2, 3)])
    sets = DisjointSets(3)
    sets.union(2, 0)
    assert sets.groups() == [[0, 2], [1]]


def _program(pad):
    t = (TensorDecl(name="X", shape=(4,), dtype="float32", role="input", binding="input:0", pad_value=pad),
         TensorDecl(name="Y", shape=(4,), dtype="float32", role="output"))
    k = Kernel(name="k", loops=(Loop(var="i", extent=4),), out="Y[i]", update="=", expr="X[i + 1]")
    return Program(name="p", tensors=t, inputs=("X",), outputs=("Y",), steps=(k,))


def test_one_program_digest_shared_by_the_graph_and_the_verdict_cache():
    from solar_assets.graph import program_digest as graph_digest
    from solar_assets.validate.verdict_cache import program_digest as verdict_digest

    assert graph_digest is program_digest and verdict_digest is program_digest
    assert program_digest(_program(0.0)) == program_digest(_program(0.0))
    digests = {program_digest(_program(v)) for v in (0.0, float("inf"), float("-inf"), float("nan"))}
    assert len(digests) == 4  # pydantic's JSON writes inf and nan alike (null); the digest does not
    assert all(len(d) == 64 and int(d, 16) >= 0 for d in digests)


def test_a_remembered_digest_follows_copies_and_stays_out_of_pickles():
    import pickle

    p = _program(0.0)
    first = program_digest(p)
    changed = p.model_copy(update={"name": "q"})  # copies __dict__, the remembered digest with it
    assert program_digest(changed) != first
    assert program_digest(changed) == program_digest(_program(0.0).model_copy(update={"name": "q"}))
    same = p.model_copy()
    assert program_digest(same) == first
    back = pickle.loads(pickle.dumps(p))
    assert all(not k.startswith("_") for k in back.__dict__)
    assert program_digest(back) == first


def test_the_cache_aware_einsum_is_a_view_of_the_graph_node():
    from solar_assets.bounds.cache_aware import problem_from_graph
    from solar_assets.graph import build_einsum_graph

    def t(name, shape, role, pos=0):
        binding = {"input": f"input:{pos}"}.get(role)
        return TensorDecl(name=name, shape=shape, dtype="float32", role=role, binding=binding)

    mm = Kernel(name="mm", loops=(Loop(var="m", extent=4), Loop(var="u", extent=1), Loop(var="n", extent=6),
                                  Loop(var="k", extent=5)),
                out="C[m, n]", update="+=", expr="A[m, k] * B[k, n]")
    program = Program(name="g", tensors=(t("A", (4, 5), "input"), t("B", (5, 6), "input", 1), t("C", (4, 6), "output")),
                      inputs=("A", "B"), outputs=("C",), steps=(mm,))
    graph = build_einsum_graph(program)
    (e,) = problem_from_graph(graph).einsums
    assert e.node is graph.node("mm")
    assert (e.name, e.text, e.flops) == ("mm", graph.node("mm").text, 2 * 4 * 6 * 5)
    assert e.ranks == (("m", 4), ("n", 6), ("k", 5))  # the extent-1 loop is no rank
    assert [t.compulsory for t in e.reads] == [4 * 5, 5 * 6] and e.out.compulsory == 4 * 6
