"""JAX control flow and selection: a data-dependent ``cond`` as a Cond step, ``fori_loop`` /
``while`` with a static trip count as a Repeat step, ``sort`` / ``top_k`` as TopK steps. Each case
runs the IR in float64 against JAX in float64 (x64 in scope) and checks the IR's structure and
the graph's counts.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from solar_assets.graph import build_einsum_graph

from jax_checks import check as run

RNG = np.random.default_rng(1)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _cond_fn(x, w):
    return jax.lax.cond(x.sum() > 0, lambda a: jnp.tanh(a @ w), lambda a: a * 2.0, x)


def test_data_dependent_cond_is_a_cond_step_and_both_predicates_validate():
    x, w = f32(4, 6), f32(6, 6)
    pos, neg = np.abs(x) + 0.1, -np.abs(x) - 0.1
    program = run(_cond_fn, pos, w, primitives=["cond"])
    run(_cond_fn, neg, w, program=program)  # the same IR, the other branch taken at run time
    conds = [s for s in program.steps if s.kind == "cond"]
    assert len(conds) == 1 and len(conds[0].branches) == 2
    graph = build_einsum_graph(program)
    assert graph.macs == 0  # the matmul branch is the dearer one: the graph keeps the multiply
    assert graph.conds == {conds[0].name: 0}
    # reduce_sum (24 adds) + the comparison (1) + the cheaper branch's multiply (24)
    assert graph.flops == 4 * 6 + 1 + 4 * 6


def test_switch_with_a_data_dependent_index_clamps_like_jax():
    fn = lambda x, k: jax.lax.switch(k[0], [jnp.sin, jnp.cos, jnp.tanh], x)  # noqa: E731
    x = f32(2, 3)
    program = None
    for k in (-3, 0, 1, 2, 7):
        program = run(fn, x, np.array([k], np.int32), primitives=["cond"], program=program)
    (cond,) = [s for s in program.steps if s.kind == "cond"]
    assert len(cond.branches) == 3


def test_fori_loop_is_one_repeat_step_with_macs_per_trip_times_trips():
    def fn(xs, w):
        def body(i, acc):
            return acc + jax.lax.dynamic_slice(xs, (i, 0), (1, 6)) @ w
        return jax.lax.fori_loop(0, 5, body, jnp.zeros((1, 6), xs.dtype))

    program = run(fn, f32(5, 6), f32(6, 6), primitives=["scan", "dynamic_slice"])
    (rep,) = [s for s in program.steps if s.kind == "repeat"]
    assert rep.extent == 5
    assert build_einsum_graph(program).macs == 5 * (1 * 6 * 6)


def test_while_with_a_static_trip_count_is_one_repeat_step():
    def fn(x, w):
        return jax.lax.while_loop(lambda s: s[0] < 7, lambda s: (s[0] + 2, jnp.tanh(s[1] @ w)), (1, x))[1]

    program = run(fn, f32(3, 4), f32(4, 4), primitives=["while"])
    (rep,) = [s for s in program.steps if s.kind == "repeat"]
    assert rep.extent == 3  # i = 1, 3, 5
    assert build_einsum_graph(program).macs == 3 * (3 * 4 * 4)


def test_sort_and_argsort_and_multi_operand_sort():
    x = f32(4, 5)
    program = run(lambda a: jnp.sort(a, axis=1), x, primitives=["sort"])
    assert [s.kind for s in program.steps] == ["topk"]
    run(lambda a: jnp.sort(a, axis=0), x, primitives=["sort"])
    run(lambda a: jnp.argsort(a, axis=-1), x, primitives=["sort"])
    payload = f32(4, 5)
    program = run(lambda a, b: jax.lax.sort((a, b), dimension=1, num_keys=1), x, payload, primitives=["sort"])
    assert sum(s.kind == "topk" for s in program.steps) == 1


def test_top_k_values_and_indices():
    x = f32(3, 7)
    program = run(lambda a: jax.lax.top_k(a, 3), x, primitives=["top_k"])
    (topk,) = [s for s in program.steps if s.kind == "topk"]
    assert topk.k == 3 and topk.largest
    graph = build_einsum_graph(program)
    assert graph.flops == 0
