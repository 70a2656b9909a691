"""JAX's structural primitives as a user writes them: generic ``reduce_window`` / ``reduce`` with a
jaxpr body and an init value, every ``scatter`` flavour with its out-of-bounds modes, the gradients
of max pooling (``select_and_scatter_add``, ``select_and_gather_add``), ``pad`` with a traced
value, and the identities (``device_put``, ``bitcast_convert_type`` to the same dtype).

Each workload is translated and validated against JAX (float64 and float32) through
``check_workload``; a few counts are checked by hand."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from solar_assets.coverage import check_workload
from solar_assets.errors import SolarError
from solar_assets.graph import build_einsum_graph
from solar_assets.translate.jax_tracer import trace_jax
from solar_assets.workloads import read_workload_source

HEAD = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

"""


def _write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(HEAD + textwrap.dedent(body))
    return path


def _validated(tmp_path: Path, name: str, body: str):
    path = _write(tmp_path, name, body)
    row = check_workload(path, None)
    assert row.translated and row.validated, row.error
    return path


def _graph(path: Path):
    return build_einsum_graph(trace_jax(read_workload_source(path)).program)


# ---------------------------------------------------------------- reduce_window with a body

def test_reduce_window_sum_with_init_counts_window_taps(tmp_path):
    path = _validated(tmp_path, "rw_add_init", """\
        def get_inputs():
            return [jax.random.normal(jax.random.key(0), (6, 8))]

        def forward(x):
            return lax.reduce_window(x, 1.5, lax.add, (2, 3), (1, 1), "VALID")
        """)
    # 5 x 6 windows of 2 x 3 taps, plus the init added once per window
    assert _graph(path).flops == 5 * 6 * (2 * 3) + 5 * 6


def test_reduce_window_sum_identity_init_is_one_kernel(tmp_path):
    path = _validated(tmp_path, "rw_add", """\
        def get_inputs():
            return [jax.random.normal(jax.random.key(1), (2, 9, 7))]

        def forward(x):
            return lax.reduce_window(x, 0.0, lax.add, (1, 3, 2), (1, 2, 1), "SAME")
        """)
    assert _graph(path).flops == 2 * 5 * 7 * (3 * 2)


REDUCE_WINDOWS = {
    # init that is not the identity, padding (which reads the init), strides, window dilation
    "max_init_pad": "lax.reduce_window(x, 0.25, lax.max, (2, 2), (1, 2), ((1, 0), (0, 2)), window_dilation=(1, 2))",
    "min_base_dilation": "lax.reduce_window(x, jnp.inf, lax.min, (3, 2), (2, 1), ((1, 1), (0, 0)), "
                         "base_dilation=(2, 1))",
    "add_base_and_window_dilation": "lax.reduce_window(x, 2.0, lax.add, (2, 2), (1, 1), ((0, 1), (2, 0)), "
                                    "base_dilation=(1, 3), window_dilation=(2, 1))",
    "mul_init": "lax.reduce_window(x * 0.5 + 1.0, 2.0, lax.mul, (2, 2), (2, 2), 'VALID')",
    "negative_padding": "lax.reduce_window(x, -1.0, lax.max, (2, 2), (1, 1), ((-1, 0), (1, -2)))",
    "traced_init": "lax.reduce_window(x, x[0, 0], lax.add, (2, 2), (1, 1), ((1, 1), (0, 1)))",
    "traced_init_base_dilation": "lax.reduce_window(x, jnp.min(x), lax.max, (2, 3), (1, 2), ((0, 1), (1, 1)), "
                                 "base_dilation=(2, 2))",
}


@pytest.mark.parametrize("name", sorted(REDUCE_WINDOWS))
def test_reduce_window_forms(tmp_path, name):
    _validated(tmp_path, f"rw_{name}", f"""\
        def get_inputs():
            return [jax.random.normal(jax.random.key(2), (5, 7))]

        def forward(x):
            return {REDUCE_WINDOWS[name]}
        """)


def test_reduce_window_max_of_integers_with_padding_and_base_dilation(tmp_path):
    _validated(tmp_path, "rw_int_max", """\
        def get_inputs():
            return [jax.random.randint(jax.random.key(16), (5, 6), -50, 50)]

        def forward(x):
            low = jnp.asarray(jnp.iinfo(x.dtype).min, x.dtype)
            return lax.reduce_window(x, low, lax.max, (2, 2), (1, 1), ((1, 1), (0, 1)), base_dilation=(2, 1))
        """)


def test_reduce_window_max_pool_gradient_is_select_and_scatter_add(tmp_path):
    """Non-overlapping 2x2 max pooling: each window's gradient lands on one element."""
    path = _validated(tmp_path, "maxpool_grad", """\
        def pool(x):
            return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2), (1, 2, 2), "VALID")

        def get_inputs():
            k1, k2 = jax.random.split(jax.random.key(3))
            return [jax.random.normal(k1, (2, 6, 8)), jax.random.normal(k2, (2, 3, 4))]

        def forward(x, g):
            return jax.vjp(pool, x)[1](g)[0]
        """)
    ops = {k.origin.op for k in trace_jax(read_workload_source(path)).program.steps if k.origin is not None}
    assert "select_and_scatter_add" in ops


# ---------------------------------------------------------------- max pooling gradients

POOL_GRADS = {
    "scatter_overlapping_padded": ("(1, 3, 3)", "(1, 2, 1)", "((0, 0), (1, 1), (1, 0))", "jnp.max"),
    "scatter_min_pool": ("(1, 2, 2)", "(1, 1, 2)", "((0, 0), (0, 1), (0, 0))", "jnp.min"),
}


@pytest.mark.parametrize("name", sorted(POOL_GRADS))
def test_select_and_scatter_add(tmp_path, name):
    window, strides, padding, _ = POOL_GRADS[name]
    op, init = ("lax.max", "-jnp.inf") if "max" in POOL_GRADS[name][3] else ("lax.min", "jnp.inf")
    path = _validated(tmp_path, name, f"""\
        def pool(x):
            return lax.reduce_window(x, {init}, {op}, {window}, {strides}, {padding})

        def get_inputs():
            x = jax.random.normal(jax.random.key(4), (2, 7, 6))
            return [x, jax.random.normal(jax.random.key(5), jax.eval_shape(pool, x).shape)]

        def forward(x, g):
            return jax.vjp(pool, x)[1](g)[0]
        """)
    assert "select_and_scatter_add" in {k.origin.op for k in trace_jax(read_workload_source(path)).program.steps}


@pytest.mark.parametrize("padding", ["'VALID'", "((1, 0), (1, 1))", "((1, 0), (1, 1)), base_dilation=(2, 1)"])
def test_select_and_gather_add_is_the_max_pool_jvp(tmp_path, padding):
    path = _validated(tmp_path, "maxpool_jvp", f"""\
        def pool(x):
            return lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (1, 2), {padding})

        def get_inputs():
            k1, k2 = jax.random.split(jax.random.key(6))
            return [jax.random.normal(k1, (6, 7)), jax.random.normal(k2, (6, 7))]

        def forward(x, t):
            return jax.jvp(pool, (x,), (t,))[1]
        """)
    assert "select_and_gather_add" in {k.origin.op for k in trace_jax(read_workload_source(path)).program.steps}


# ---------------------------------------------------------------- reduce with a body

def test_reduce_with_a_non_identity_init(tmp_path):
    path = _validated(tmp_path, "reduce_add_init", """\
        def get_inputs():
            return [jax.random.normal(jax.random.key(7), (4, 6))]

        def forward(x):
            return lax.reduce(x, 3.0, lax.add, (0,))
        """)
    assert _graph(path).flops == 4 * 6 + 6  # the sum, then the init added once per column


def test_reduce_of_two_operands_with_one_monoid_each(tmp_path):
    _validated(tmp_path, "reduce_two", """\
        def get_inputs():
            k1, k2 = jax.random.split(jax.random.key(8))
            return [jax.random.normal(k1, (4, 6)), jax.random.randint(k2, (4, 6), -5, 5)]

        def body(a, b):
            return lax.max(a[0], b[0]), lax.min(a[1], b[1])

        def forward(x, i):
            return lax.reduce((x, i), (jnp.asarray(0.5, x.dtype), jnp.asarray(1, i.dtype)), body, (1,))
        """)


def test_reduce_with_a_comparison_body_is_a_named_gap(tmp_path):
    path = _write(tmp_path, "reduce_argmax_body", """\
        def get_inputs():
            return [jax.random.normal(jax.random.key(9), (4, 6))]

        def body(a, b):
            pick = a[0] >= b[0]
            return lax.select(pick, a[0], b[0]), lax.select(pick, a[1], b[1])

        def forward(x):
            idx = lax.broadcasted_iota(jnp.int32, x.shape, 1)
            return lax.reduce((x, idx), (-jnp.inf, 0), body, (1,))
        """)
    row = check_workload(path, None)
    assert not row.translated and "reduction body" in row.error


# ---------------------------------------------------------------- scatter

SCATTERS = {
    # jnp's .at[] (FILL_OR_DROP): out-of-range indices are dropped, negative ones wrap first
    "set_drop": "x.at[idx].set(u)",
    "add_drop": "x.at[idx].add(u)",
    "mul_drop": "x.at[idx].multiply(u)",
    "min_drop": "x.at[idx].min(u)",
    "max_drop": "x.at[idx].max(u)",
    "set_clip": "x.at[jnp.array([1, 9, -3, 4])].set(u, mode='clip')",  # 9 clamps to 7: no collision
    "add_clip": "x.at[idx].add(u, mode='clip')",
    "max_promise": "x.at[jnp.clip(idx, 0, 7)].max(u, mode='promise_in_bounds')",
    "sub": "x.at[idx].subtract(u)" ,
}


@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_scatter_flavours_and_modes(tmp_path, name):
    _validated(tmp_path, f"scatter_{name}", f"""\
        def get_inputs():
            k1, k2 = jax.random.split(jax.random.key(10))
            return [jax.random.normal(k1, (8, 3)), jax.random.normal(k2, (4, 3))]

        def forward(x, u):
            idx = jnp.array([1, 9, -3, 12])  # rows 1, (dropped), 5, (dropped)
            return {SCATTERS[name]}
        """)


WINDOW_SCATTER = """\
    DN = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0, 1))

    def get_inputs():
        k1, k2 = jax.random.split(jax.random.key(11))
        return [jax.random.normal(k1, (6, 7)), jax.random.normal(k2, (5, 2, 3)),
                jax.random.randint(jax.random.key(12), (5, 2), -2, 8)]

    def forward(x, u, idx):
        return lax.{op}(x, idx, u, DN, mode=lax.GatherScatterMode.{mode})
    """


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_mul", "scatter_max"])
@pytest.mark.parametrize("mode", ["CLIP", "FILL_OR_DROP"])
def test_scatter_of_2x3_windows_at_traced_starts(tmp_path, op, mode):
    """Starts in [-2, 8) on a 6 x 7 operand: windows that do not fit are clamped (CLIP) or
    dropped whole (FILL_OR_DROP)."""
    if op == "scatter" and mode == "CLIP":
        pytest.skip("clamped starts of a replacing scatter can collide: XLA leaves their order unspecified")
    _validated(tmp_path, f"window_{op}_{mode}", WINDOW_SCATTER.format(op=op, mode=mode))


# ---------------------------------------------------------------- pad and identities

@pytest.mark.parametrize("config", ["((1, 2, 0), (0, 3, 0))", "((1, -1, 2), (-2, 1, 1))", "((0, 0, 0), (0, 0, 0))"])
def test_pad_with_a_traced_value(tmp_path, config):
    _validated(tmp_path, "pad_traced", f"""\
        def get_inputs():
            k1, k2 = jax.random.split(jax.random.key(13))
            return [jax.random.normal(k1, (3, 4)), jax.random.normal(k2, ())]

        def forward(x, v):
            return lax.pad(x, v, {config})
        """)


def test_device_put_is_the_identity(tmp_path):
    path = _validated(tmp_path, "device_put", """\
        def get_inputs():
            return [jax.random.normal(jax.random.key(14), (3, 4))]

        def forward(x):
            return jax.device_put(x) * 2.0
        """)
    assert _graph(path).flops == 3 * 4


def test_bitcasts_and_conj(tmp_path):
    """A bitcast to the same dtype is the identity (translated; the float64 golden run would
    bitcast float64 and change the shape, so only the float32 comparison runs); a reinterpreting
    bitcast is a named gap; conj of a real array is a complex array (two planes, the imaginary zero)."""
    same = _write(tmp_path, "bitcast_same", """\
        def get_inputs():
            return [jax.random.normal(jax.random.key(15), (2, 3))]

        def forward(x):
            return lax.bitcast_convert_type(x, jnp.float32) + 1.0
        """)
    assert build_einsum_graph(trace_jax(read_workload_source(same)).program).flops == 2 * 3
    path = _write(tmp_path, "bitcast_int", """\
        def get_inputs():
            return [jax.random.normal(jax.random.key(15), (2, 3))]

        def forward(x):
            return lax.bitcast_convert_type(x, jnp.int32)
        """)
    with pytest.raises(SolarError, match="reinterpretation"):
        trace_jax(read_workload_source(path))
    conj = _write(tmp_path, "conj", """\
        def get_inputs():
            return [jax.random.normal(jax.random.key(15), (2, 3))]

        def forward(x):
            return lax.conj(x)
        """)
    program = trace_jax(read_workload_source(conj)).program
    assert len(program.outputs) == 2  # the real and the imaginary plane
