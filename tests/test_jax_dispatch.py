"""workloads.jax_dispatch: a JAX function run once, compiled whole only where that is cheaper than
eager dispatch, with the values eager execution gives."""
from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import numpy as np

from solar_assets.golden.jax_golden import make_jax_golden
from solar_assets.pipeline import read_source
from solar_assets.workloads import jax_dispatch
from solar_assets.workloads.jax_dispatch import EQUATIONS_PER_DISTINCT, cheaper_whole, equation_counts, run_once


def test_counts_every_equation_and_the_distinct_ones_eager_dispatch_compiles():
    def f(x, y):
        return jnp.sin(x) + jnp.sin(x) * y  # sin, sin, mul, add: two sins of one signature

    jaxpr = jax.make_jaxpr(f)(jnp.ones(4), jnp.ones(4)).jaxpr
    assert equation_counts(jaxpr) == (4, 3)


def test_a_jitted_callee_counts_its_own_equations_and_once_as_distinct():
    inner = jax.jit(lambda x: jnp.exp(jnp.sin(x)))

    def f(x):
        return inner(x) + inner(x)  # two calls of one traced callee (2 equations each) and an add

    assert equation_counts(jax.make_jaxpr(f)(jnp.ones(3)).jaxpr) == (2 + 2 * 2 + 1, 2)


def test_a_small_function_compiles_whole_and_a_long_repetition_runs_eagerly():
    def small(x):
        return jnp.tanh(x) * 2.0 + 1.0

    def repeated(x):
        for _ in range(3 * EQUATIONS_PER_DISTINCT):
            x = jnp.sin(x)  # one distinct equation, many times
        return x

    assert cheaper_whole(jax.make_jaxpr(small)(jnp.ones(8)).jaxpr)
    assert not cheaper_whole(jax.make_jaxpr(repeated)(jnp.ones(8)).jaxpr)


def test_run_once_gives_the_eager_values_either_way(monkeypatch):
    x = jnp.linspace(-2.0, 2.0, 64, dtype=jnp.float32).reshape(8, 8)

    def f(params, x):
        return [jnp.tanh(x @ params[0]) + params[1]]

    params = [jnp.eye(8, dtype=jnp.float32) * 0.5, jnp.full((8,), 0.25, jnp.float32)]
    expected = np.asarray(f(params, x)[0])
    compiled = run_once(f, params, x)
    assert isinstance(compiled, list) and len(compiled) == 1
    np.testing.assert_allclose(np.asarray(compiled[0]), expected, rtol=1e-6, atol=1e-7)
    monkeypatch.setattr(jax_dispatch, "EQUATIONS_PER_DISTINCT", 0)  # every function "too long": eager
    np.testing.assert_array_equal(np.asarray(run_once(f, params, x)[0]), expected)


def test_a_function_that_does_not_trace_runs_eagerly():
    calls = []

    def f(x):
        calls.append(1)
        return x * 2.0 if float(x.sum()) > 0 else x  # concrete Python control flow: no jit

    out = run_once(f, jnp.ones(3))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0, 2.0])
    assert len(calls) == 2  # the failed trace, then the eager run


LINEN_MODEL = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from flax import linen as nn

    BATCH = 4
    FEATURES = 32
    HIDDEN = 64


    class Model(nn.Module):
        hidden: int

        @nn.compact
        def __call__(self, x):
            h = nn.LayerNorm()(x)
            h = nn.gelu(nn.Dense(self.hidden)(h))
            return x + nn.Dense(x.shape[-1])(h)


    def get_inputs():
        return [jax.random.normal(jax.random.key(0), (BATCH, FEATURES))]


    def get_init_inputs():
        return [HIDDEN]
''')


def test_golden_of_a_flax_model_agrees_compiled_whole_or_eager(tmp_path, monkeypatch):
    """Parameters, inputs and outputs agree to float32 rounding (a few ulps: fused multiply-adds,
    fused reductions), and the compiled outputs sit as close to the float64 run as eager's do."""
    path = tmp_path / "small_mlp_block.py"
    path.write_text(LINEN_MODEL)
    monkeypatch.setattr(jax_dispatch, "EQUATIONS_PER_DISTINCT", 10**6)
    compiled = make_jax_golden(read_source(path))
    monkeypatch.setattr(jax_dispatch, "EQUATIONS_PER_DISTINCT", 0)
    eager = make_jax_golden(read_source(path))
    assert set(compiled.params) == set(eager.params) and compiled.params
    for name in eager.params:
        np.testing.assert_allclose(compiled.params[name], eager.params[name], rtol=1e-6, atol=1e-7)
    for c, e in zip(compiled.inputs, eager.inputs):
        np.testing.assert_allclose(c, e, rtol=1e-6, atol=1e-7)
    for c, e, e64 in zip(compiled.outputs, eager.outputs, eager.outputs64):
        np.testing.assert_allclose(c, e, rtol=2e-6, atol=1e-6)
        scale = float(np.max(np.abs(e64)))
        assert float(np.max(np.abs(c - e64))) <= 4 * float(np.max(np.abs(e - e64))) + 1e-6 * scale
    for c64, e64 in zip(compiled.outputs64, eager.outputs64):  # from inputs and weights an ulp apart
        np.testing.assert_allclose(c64, e64, rtol=1e-5, atol=1e-6)
