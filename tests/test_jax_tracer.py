"""The JAX tracer, one primitive family per case: traced with ``jax.make_jaxpr``, executed as IR in
float64 and compared with JAX itself in float64 (x64 enabled in scope) at 1e-9 of the largest
value, so an indexing slip cannot hide in rounding. Each case also asserts that the primitive it
is about really is in the jaxpr (a case that silently tested something else would assert nothing).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from solar_assets.graph import build_einsum_graph
from solar_assets.translate import TranslationError
from solar_assets.translate.jax_tracer import trace_jax
from solar_assets.workloads import read_workload_source

from jax_checks import check

RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def pos(*shape):
    return (RNG.random(shape) + 0.5).astype(np.float32)


# name -> (function, inputs, primitives it must contain)
CASES = {
    "dot_general_batched": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (f32(2, 3, 4), f32(2, 4, 5)),
                            ["dot_general"]),
    "dot_general_contract2": (lambda a, b: jnp.einsum("ijk,jkl->il", a, b), (f32(3, 4, 2), f32(4, 2, 5)),
                              ["dot_general"]),
    "conv_strided_padded": (lambda x, w: jax.lax.conv_general_dilated(x, w, (2, 1), [(1, 2), (0, 1)]),
                            (f32(2, 3, 7, 6), f32(4, 3, 3, 2)), ["conv_general_dilated"]),
    "conv_rhs_dilation_groups_nhwc": (
        lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", rhs_dilation=(2, 2), feature_group_count=2,
                                                  dimension_numbers=("NHWC", "HWIO", "NHWC")),
        (f32(2, 6, 5, 4), f32(3, 3, 2, 6)), ["conv_general_dilated"]),
    "conv_lhs_dilation_transposed": (
        lambda x, w: jax.lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")),
        (f32(1, 3, 4, 5), f32(2, 3, 3, 3)), ["conv_general_dilated"]),
    "conv_lhs_dilation_valid_1d": (
        lambda x, w: jax.lax.conv_general_dilated(x, w, (1,), [(2, 1)], lhs_dilation=(3,)),
        (f32(2, 2, 5), f32(3, 2, 3)), ["conv_general_dilated"]),
    "reductions": (lambda x: (x.sum(1), x.max(0), x.min(1), jnp.prod(x * 0.5 + 1, 0), jnp.all(x > -1, 1),
                              jnp.any(x > 1, 0)), (f32(4, 6),),
                   ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or"]),
    "arg_reductions": (lambda x: (jnp.argmax(x, 1), jnp.argmin(x, 0)), (f32(5, 7),), ["argmax", "argmin"]),
    "cumulative": (lambda x: (jnp.cumsum(x, 1), jnp.cumprod(x * 0.3 + 1, 0), jax.lax.cummax(x, 1),
                              jax.lax.cummin(x, 0, reverse=True), jax.lax.cumlogsumexp(x, 1),
                              jax.lax.cumsum(x, 0, reverse=True)), (f32(4, 6),),
                   ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]),
    "unary_math": (lambda x: (jnp.exp(x), jnp.exp2(x), jnp.log(jnp.abs(x) + 1), jnp.log1p(jnp.abs(x)),
                              jnp.expm1(x), jnp.tanh(x), jax.nn.sigmoid(x), jnp.sin(x), jnp.cos(x), jnp.tan(x * 0.5),
                              jnp.sqrt(jnp.abs(x)), jax.lax.rsqrt(jnp.abs(x) + 1), jnp.cbrt(x), jax.lax.erf(x),
                              jax.lax.erfc(x), jnp.sinh(x), jnp.cosh(x), jnp.arcsinh(x), jnp.arctanh(x * 0.3),
                              jnp.arccosh(jnp.abs(x) + 1.5), jnp.sign(x), jnp.floor(x * 3), jnp.ceil(x * 3),
                              jnp.round(x * 3), jax.lax.round(x * 3), jnp.square(x), x ** 3, x ** -2,
                              jnp.isfinite(x / (x > 0))), (f32(4, 5),),
                   ["exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "sqrt", "rsqrt",
                    "cbrt", "erf", "erfc", "sinh", "cosh", "asinh", "atanh", "acosh", "sign", "floor", "ceil", "round",
                    "square", "integer_pow", "is_finite"]),
    "binary_math": (lambda x, y: (x + y, x - y, x * y, x / y, jnp.maximum(x, y), jnp.minimum(x, y), y ** x,
                                  jnp.fmod(x, y), x > y, x <= y, x == y, x != y, (x > 0) & (y > 0), (x > 0) | (y > 0),
                                  (x > 0) ^ (y > 0), ~(x > 0), jax.lax.clamp(-0.5, x, 0.5)), (f32(3, 4), pos(3, 4)),
                    ["add", "sub", "mul", "div", "max", "min", "pow", "rem", "gt", "le", "eq", "ne", "and", "or",
                     "xor", "not", "clamp"]),
    "integer_ops": (lambda i, j: (i // j, i % j, jax.lax.div(i, j), jax.lax.rem(i, j), (i * 2.5).astype(jnp.int32),
                                  jnp.maximum(i, j)),
                    (np.array([[7, -7, 5], [-3, 9, 0]], np.int32), np.array([[2, 2, -3], [2, -4, 1]], np.int32)),
                    ["div", "rem", "convert_element_type"]),
    "select_and_convert": (lambda x, i: (jnp.where(x > 0, x, -x * 2), jax.lax.select_n(i, x, x * 2, x * 3),
                                         x.astype(jnp.int32), (x > 0).astype(jnp.float32), i.astype(jnp.float32)),
                           (f32(3, 4), np.array([[0, 1, 2, 1]] * 3, np.int32)), ["select_n", "convert_element_type"]),
    "movement": (lambda x: (jnp.broadcast_to(x[:, None, :], (3, 2, 4)), x.reshape(4, 3), x.T, jnp.squeeze(x[None]),
                            jnp.expand_dims(x, 1), x[1:, ::2], jax.lax.dynamic_slice(x, (1, 2), (2, 2)),
                            jax.lax.dynamic_update_slice(x, jnp.ones((2, 2)), (1, 5)),
                            jnp.concatenate([x, x * 2], 1), jnp.pad(x, ((1, 0), (0, 2)), constant_values=7.0),
                            jax.lax.pad(x, 0.0, [(1, -1, 1), (0, 1, 2)]), jnp.flip(x, 1), jnp.split(x, [1], 0)[1]),
                 (f32(3, 4),),
                 ["broadcast_in_dim", "reshape", "transpose", "squeeze", "slice", "dynamic_slice",
                  "dynamic_update_slice", "concatenate", "pad", "rev", "split"]),
    "iota": (lambda x: x + jnp.arange(4, dtype=jnp.float32) + jax.lax.broadcasted_iota(jnp.int32, (3, 4), 0),
             (f32(3, 4),), ["iota"]),
    "gather_embedding": (lambda e, i: e[i], (f32(10, 4), np.array([[1, -2], [3, 9]], np.int32)), ["gather"]),
    "gather_take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1),
                               (f32(5, 6), RNG.integers(0, 6, (5, 3)).astype(np.int32)), ["gather"]),
    "scatter_add": (lambda x, i, u: x.at[i].add(u), (f32(10, 4), np.array([1, 3, 1, 9], np.int32), f32(4, 4)),
                    ["scatter-add"]),
    "calls_inlined": (lambda x: jax.jit(lambda y: jax.nn.relu(y) * 2)(x) + jax.nn.gelu(x) + jax.nn.silu(x)
                      + jax.checkpoint(jnp.sin)(x), (f32(3, 4),), ["jit", "custom_jvp_call"]),
    "custom_vjp": (None, (f32(3, 4),), ["custom_vjp_call"]),
    "scan_rnn": (lambda h, xs, w: jax.lax.scan(lambda c, x: (jnp.tanh(c @ w + x), c.sum()), h, xs),
                 (f32(2, 3), f32(5, 2, 3), f32(3, 3)), ["scan"]),
    "fori_loop": (lambda x: jax.lax.fori_loop(0, 4, lambda i, c: c * 0.5 + jax.lax.dynamic_slice(x, (i, 0), (1, 3)), x[:1]),
                  (f32(6, 3),), ["scan", "dynamic_slice"]),
    "while_static": (lambda x: jax.lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, jnp.sin(s[1])), (0, x))[1],
                     (f32(2, 3),), ["while"]),
    "cond_static": (lambda x: jax.lax.cond(True, lambda y: y * 2, lambda y: y - 1, x)
                    + jax.lax.switch(2, [jnp.sin, jnp.cos, jnp.tanh], x), (f32(2, 3),), ["cond"]),
    "softmax_logsumexp": (lambda x: (jax.nn.softmax(x, -1), jax.nn.logsumexp(x, 0), jax.nn.log_softmax(x)),
                          (f32(3, 5),), ["reduce_max", "stop_gradient"]),
}


@jax.custom_vjp
def _clip_gradient(x):
    return jnp.tanh(x) * 3


_clip_gradient.defvjp(lambda x: (_clip_gradient(x), x), lambda x, g: (g,))
CASES["custom_vjp"] = (lambda x: _clip_gradient(x) + 1, *CASES["custom_vjp"][1:])


@pytest.mark.parametrize("name", sorted(CASES))
def test_primitive_family(name):
    fn, xs, primitives = CASES[name]
    check(fn, *xs, primitives=primitives)


def test_dot_general_macs_exact():
    program = check(lambda a, b: a @ b, f32(6, 5), f32(5, 7), primitives=["dot_general"])
    assert build_einsum_graph(program).macs == 6 * 5 * 7


def test_transposed_conv_counts_no_inserted_zeros():
    """lhs_dilation: only real products are MACs (batch · out-ch · in-ch · input positions · taps)."""
    program = check(CASES["conv_lhs_dilation_transposed"][0], *CASES["conv_lhs_dilation_transposed"][1])
    assert build_einsum_graph(program).macs == 1 * 2 * 3 * (4 * 5) * (3 * 3)


def test_scan_is_one_repeat_step():
    """A scan with tensor carries is one Repeat step: its body once (one matmul), run 5 times."""
    program = check(CASES["scan_rnn"][0], *CASES["scan_rnn"][1])
    repeats = [s for s in program.steps if s.kind == "repeat"]
    assert len(repeats) == 1 and repeats[0].extent == 5
    assert sum(getattr(s, "update", None) == "+=" and "*" in s.expr for s in repeats[0].steps) == 1
    assert build_einsum_graph(program).macs == 5 * 2 * 3 * 3


def test_fori_loop_with_a_counter_slice_is_one_repeat_step():
    """The counter is only a dynamic_slice start (affine), so the loop is a Repeat of 4 trips."""
    program = check(CASES["fori_loop"][0], *CASES["fori_loop"][1])
    repeats = [s for s in program.steps if s.kind == "repeat"]
    assert len(repeats) == 1 and repeats[0].extent == 4


def test_fori_loop_with_a_non_affine_counter_use_unrolls():
    program = check(lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * i.astype(c.dtype) + 1.0, x), f32(2, 3),
                    primitives=["scan"])
    assert not any(s.kind == "repeat" for s in program.steps)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def test_unlowered_primitive_names_it_and_the_line(tmp_path):
    path = _write(tmp_path, "popcount_workload", """\
        import jax
        import jax.numpy as jnp

        def get_inputs():
            return [jnp.arange(12, dtype=jnp.int32).reshape(3, 4)]

        def forward(x):
            y = x * 2
            return jax.lax.population_count(y)
        """)
    src = read_workload_source(path)
    assert src.framework == "jax"
    with pytest.raises(TranslationError) as e:
        trace_jax(src)
    message = str(e.value)
    assert "no lowering for JAX primitive population_count" in message and str(path) in message
    assert f"{path.name}:9" in message  # the line of population_count


def test_function_that_does_not_trace(tmp_path):
    path = _write(tmp_path, "untraceable", """\
        import jax

        def get_inputs():
            return [jax.random.normal(jax.random.key(0), (3,))]

        def forward(x):
            if x.sum() > 0:  # Python control flow on a traced value
                return x
            return -x
        """)
    with pytest.raises(TranslationError, match="does not trace.*TracerBoolConversionError"):
        trace_jax(read_workload_source(path))


def test_data_dependent_while_is_a_clear_gap(tmp_path):
    path = _write(tmp_path, "dyn_while", """\
        import jax

        def get_inputs():
            return [jax.random.normal(jax.random.key(0), (3,))]

        def forward(x):
            return jax.lax.while_loop(lambda y: y.sum() < 10.0, lambda y: y * 2 + 1, x)
        """)
    with pytest.raises(TranslationError, match="cannot lower JAX primitive while.*depends on data"):
        trace_jax(read_workload_source(path))


JAX_BF16_DENSE = '''
import jax
import jax.numpy as jnp
from flax import linen as nn

batch_size = 8
d_in = 64
hidden = 32


class Model(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        h = nn.Dense(self.hidden, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16)(x)
        return jax.nn.relu(h.astype(jnp.float32) * 2.0).astype(jnp.bfloat16)


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (batch_size, d_in)).astype(jnp.bfloat16)]


def get_init_inputs():
    return [hidden]
'''


def test_bf16_flax_dense_traces_bf16_and_validates(tmp_path):
    from solar_assets.golden.jax_golden import make_jax_golden
    from solar_assets.validate import validate_program

    path = tmp_path / "jax_bf16_dense.py"
    path.write_text(JAX_BF16_DENSE)
    src = read_workload_source(path)
    program = trace_jax(src).program
    declared = {t.binding: t.dtype for t in program.tensors if t.role in ("input", "weight")}
    assert declared == {"input:0": "bfloat16", "param:Dense_0.kernel": "bfloat16", "param:Dense_0.bias": "bfloat16"}
    assert program.tensor(program.outputs[0]).dtype == "bfloat16"
    graph = build_einsum_graph(program)
    assert graph.macs == 8 * 64 * 32
    assert graph.io_bytes == 2 * (8 * 64 + 64 * 32 + 32 + 8 * 32)  # 2 bytes an element throughout
    golden = make_jax_golden(src)
    assert golden.inputs[0].dtype == np.float32  # bf16 values, widened exactly
    result = validate_program(program, golden, source=str(path))
    assert result.ok, str(result)
