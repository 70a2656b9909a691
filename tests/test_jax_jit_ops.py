"""A jitted call is one framework op in JAX: eager JAX dispatches it as one XLA computation (issue 23).

``jax.nn.silu`` is ``@jax.jit`` in the pinned JAX (``gelu`` and ``softmax`` are not: their jit is
commented out upstream, so eager JAX runs them primitive by primitive, and so does the bound).
"""
from __future__ import annotations

from pathlib import Path

from solar_assets.bounds import sol_bounds
from solar_assets.graph import build_einsum_graph
from solar_assets.hardware import load_hardware
from solar_assets.translate.jax_tracer import trace_jax
from solar_assets.workloads import read_workload_source

H100 = load_hardware("H100_SXM")

SILU_MLP = '''
import jax
import jax.numpy as jnp

ROWS = 256
DIM = 512


@jax.jit
def scaled_residual(x, h):
    return x + 0.5 * jnp.tanh(h)


def get_inputs():
    k = jax.random.split(jax.random.key(0), 2)
    return [jax.random.normal(k[0], (ROWS, DIM)), jax.random.normal(k[1], (DIM, DIM))]


def forward(x, w):
    h = jax.nn.silu(x @ w)
    return scaled_residual(x, h)
'''

WHOLE_JIT = '''
import jax
import jax.numpy as jnp


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (64, 128))]


@jax.jit
def forward(x):
    return jnp.tanh(x) * 2.0 + 1.0
'''


def _graph(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return build_einsum_graph(trace_jax(read_workload_source(path)).program)


def test_a_jitted_call_is_one_op_reading_its_inputs_and_writing_its_result_once(tmp_path):
    g = _graph(tmp_path, "silu_mlp", SILU_MLP)
    b = sol_bounds(g, H100)
    ops = {o.name: o for o in b.per_op}
    silu = [o for o in b.per_op if g.node(o.nodes[0]).origin.op == "jit:silu"]
    helper = [o for o in b.per_op if g.node(o.nodes[0]).origin.op == "jit:scaled_residual"]
    assert len(silu) == 1 and len(helper) == 1, sorted(ops)
    n = 256 * 512 * 4
    assert silu[0].bytes == 2 * n  # reads x @ w, writes silu's result: one round trip
    assert helper[0].bytes == 3 * n  # reads x and h, writes the sum
    assert len(silu[0].nodes) > 1 and len(helper[0].nodes) > 1  # several primitives, one op


def test_a_model_jitted_whole_keeps_its_ops_apart(tmp_path):
    g = _graph(tmp_path, "whole_jit", WHOLE_JIT)
    ops = sol_bounds(g, H100).per_op
    assert len(ops) >= 2 and not any(g.node(o.nodes[0]).origin.op.startswith("jit:") for o in ops)
