"""The executor: hand-written IR programs against direct NumPy computations."""
from __future__ import annotations

import ast
import itertools
import math
import operator
import re

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from ir_schemas import Kernel, Loop, Program, Reshape, TensorDecl
from solar_assets.execute import (
    ExecutionError, Executor, cache_dir, execute_program, kernel_source, plan_einsum, plan_kernel,
)
from solar_assets.execute import cache
from solar_assets.ir import parse_kernel

RNG = np.random.default_rng(1234)


# ------------------------------------------------------------------ building small programs
def t(name, shape, role="intermediate", dtype="float32", pad=None, binding=None):
    if binding is None and role in ("input", "weight"):
        binding = f"input:{name}" if role == "input" else f"param:{name}"
    return TensorDecl(name=name, shape=shape, dtype=dtype, role=role, binding=binding, pad_value=pad)


def k(name, loops, stmt, init="identity"):
    """``k("mm", "m<4, n<8, k<16", "Y[m, n] += A[m, k] * B[k, n]")``"""
    out, update, expr = re.match(r"^(\w+\[[^\]]*\])\s*(max=|min=|\+=|\*=|=)\s*(.*)$", stmt).groups()
    lps = [lp.split("<") for lp in loops.split(",")] if loops.strip() else []
    return Kernel(name=name, loops=tuple(Loop(var=v.strip(), extent=int(e)) for v, e in lps),
                  out=out, update=update, expr=expr, init=init)


def program(tensors, steps, outputs=("Y",)):
    inputs = tuple(x.name for x in tensors if x.role == "input")
    return Program(name="test", tensors=tuple(tensors), inputs=inputs, outputs=tuple(outputs), steps=tuple(steps))


def bindings_of(p, values):
    return {x.binding: values[x.name] for x in p.tensors if x.binding}


def run(p, values, **kw):
    return execute_program(p, bindings_of(p, values), **kw)


def randn(*shape):
    return RNG.standard_normal(shape)


# ------------------------------------------------------------------ GEMM and its loop order
M, N, K = 13, 24, 17
GEMM = program(
    [t("A", (M, K), "input"), t("B", (K, N), "weight"), t("Y", (M, N), "output")],
    [k("mm", f"m<{M}, n<{N}, k<{K}", "Y[m, n] += A[m, k] * B[k, n]")],
)


@pytest.mark.parametrize("einsum", [False, True], ids=["numba", "einsum"])
def test_gemm_matches_numpy(einsum):
    a, b = randn(M, K), randn(K, N)
    (y,) = run(GEMM, {"A": a, "B": b}, einsum=einsum)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, a @ b, rtol=1e-13, atol=1e-13)
    (y32,) = run(GEMM, {"A": a, "B": b}, dtype=np.float32, einsum=einsum)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, a @ b, rtol=1e-5, atol=1e-5)


def test_gemm_source_puts_the_reduction_in_the_middle():
    plan = plan_kernel(parse_kernel(GEMM.steps[0]), GEMM)
    assert plan.order == ("m", "k", "n") and plan.form == "direct"
    src = kernel_source(parse_kernel(GEMM.steps[0]), GEMM)
    loops = [line.strip() for line in src.splitlines() if line.strip().startswith("for ")]
    assert loops == ["for i0 in range(n0):", "for i1 in range(n1):",  # the init nest
                     "for i0 in range(n0):", "for i2 in range(n2):", "for i1 in range(n1):"]
    assert "def kernel(out, in0, in1, n0, n1, n2):" in src and plan.extents == (M, N, K)
    assert "out[i0, i1] += (float(in0[i0, i2]) * float(in1[i2, i1]))" in src
    assert "@numba.njit(cache=True" in src and "parallel" not in src


def test_row_reduction_keeps_its_contiguous_loop_innermost_with_a_local_accumulator():
    p = program([t("X", (5, 7), "input"), t("Y", (5,), "output")], [k("s", "i<5, j<7", "Y[i] += X[i, j]")])
    plan = plan_kernel(parse_kernel(p.steps[0]), p)
    assert plan.order == ("i", "j") and plan.form == "local"
    assert "acc = 0.0" in plan.source and "out[i0] = acc" in plan.source


# ------------------------------------------------------------------ convolution and pooling
def conv_reference(x, w, stride, pad):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = sliding_window_view(xp, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("ncpqrs,kcrs->nkpq", win, w)


def conv_program(h, p_out, pad):
    return program(
        [t("X", (2, 3, h, h), "input", pad=0.0 if pad else None), t("W", (4, 3, 3, 3), "weight"),
         t("Y", (2, 4, p_out, p_out), "output")],
        [k("conv", f"n<2, k<4, p<{p_out}, q<{p_out}, c<3, r<3, s<3",
           f"Y[n, k, p, q] += X[n, c, p*2 + r - {pad}, q*2 + s - {pad}] * W[k, c, r, s]")],
    )


def test_conv2d_stride2_zero_padding_matches_numpy():
    p = conv_program(9, 5, 1)
    x, w = randn(2, 3, 9, 9), randn(4, 3, 3, 3)
    (y,) = run(p, {"X": x, "W": w})
    np.testing.assert_allclose(y, conv_reference(x, w, 2, 1), rtol=1e-12, atol=1e-12)
    src = kernel_source(parse_kernel(p.steps[0]), p)
    # bounds are checked only where the window leaves the image: the two spatial dims; the padding's
    # -1 is the offset argument o0 (``codegen.Offsets``)
    assert "0 <= i2 * 2 + i5 + o0 < in0.shape[2]" in src and "0 <= i3 * 2 + i6 + o0 < in0.shape[3]" in src
    assert src.split("def kernel")[1].count("0 <= ") == 2
    assert plan_kernel(parse_kernel(p.steps[0]), p).offsets == (-1,)
    assert plan_einsum(parse_kernel(p.steps[0]), p.tensor_map()) is None  # padded: numba only


@pytest.mark.parametrize("einsum", [False, True], ids=["numba", "einsum"])
def test_unpadded_strided_conv_runs_both_ways(einsum):
    p = conv_program(11, 5, 0)
    x, w = randn(2, 3, 11, 11), randn(4, 3, 3, 3)
    (y,) = run(p, {"X": x, "W": w}, einsum=einsum)
    np.testing.assert_allclose(y, conv_reference(x, w, 2, 0), rtol=1e-12, atol=1e-12)


MAXPOOL = program(
    [t("X", (2, 3, 9, 9), "input", pad=float("-inf")), t("Y", (2, 3, 5, 5), "output")],
    [k("pool", "n<2, c<3, p<5, q<5, r<3, s<3", "Y[n, c, p, q] max= X[n, c, p*2 + r - 1, q*2 + s - 1]")],
)


def test_max_pooling_with_minus_inf_padding_matches_numpy():
    x = randn(2, 3, 9, 9)
    x[0, 0, 4, 4] = np.nan  # max pooling propagates NaN, like torch
    (y,) = run(MAXPOOL, {"X": x})
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    ref = sliding_window_view(xp, (3, 3), axis=(2, 3))[:, :, ::2, ::2].max(axis=(-1, -2))
    np.testing.assert_array_equal(y, ref)
    assert np.isnan(y[0, 0, 2, 2]) and np.isnan(y).sum() == 1


# ------------------------------------------------------------------ chains
def test_softmax_chain_matches_numpy():
    p = program(
        [t("X", (6, 10), "input"), t("Mx", (6,)), t("E", (6, 10)), t("S", (6,)), t("Y", (6, 10), "output")],
        [k("rowmax", "i<6, j<10", "Mx[i] max= X[i, j]"),
         k("shift_exp", "i<6, j<10", "E[i, j] = exp(X[i, j] - Mx[i])"),
         k("rowsum", "i<6, j<10", "S[i] += E[i, j]"),
         k("divide", "i<6, j<10", "Y[i, j] = E[i, j] / S[i]")],
    )
    x = randn(6, 10) * 5
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    for einsum in (False, True):
        (y,) = run(p, {"X": x}, einsum=einsum)
        np.testing.assert_allclose(y, ref, rtol=1e-13, atol=1e-15)


def test_layer_norm_matches_numpy():
    p = program(
        [t("X", (4, 16), "input"), t("G", (16,), "weight"), t("Bb", (16,), "weight"),
         t("Mu", (4,)), t("Var", (4,)), t("Y", (4, 16), "output")],
        [k("mean", "i<4, j<16", "Mu[i] += X[i, j] / 16"),
         k("var", "i<4, j<16", "Var[i] += (X[i, j] - Mu[i]) ** 2 / 16"),
         k("norm", "i<4, j<16", "Y[i, j] = (X[i, j] - Mu[i]) * rsqrt(Var[i] + 1e-05) * G[j] + Bb[j]")],
    )
    x, g, b = randn(4, 16) * 3 + 1, randn(16), randn(16)
    (y,) = run(p, {"X": x, "G": g, "Bb": b})
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5) * g + b, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ init: identity vs keep
def test_reduction_into_one_column_leaves_the_other_columns_alone():
    p = program(
        [t("X", (5, 7), "input"), t("Y", (5, 6), "output")],
        [k("fill", "i<5, j<6", "Y[i, j] = 7.0"),
         k("sum_col3", "i<5, j<7", "Y[i, 3] += X[i, j]"),
         k("max_col1", "i<5, j<7", "Y[i, 1] max= X[i, j]")],
    )
    x = randn(5, 7)
    (y,) = run(p, {"X": x})
    ref = np.full((5, 6), 7.0)
    ref[:, 3], ref[:, 1] = x.sum(1), x.max(1)
    np.testing.assert_allclose(y, ref, rtol=1e-14)


def test_gemm_into_a_slice_resets_only_the_slice():
    p = program(
        [t("A", (4, 5), "input"), t("B", (5, 3), "weight"), t("Y", (4, 7), "output")],
        [k("fill", "i<4, j<7", "Y[i, j] = -1.0"),
         k("mm", "m<4, n<3, k<5", "Y[m, n + 2] += A[m, k] * B[k, n]")],
    )
    a, b = randn(4, 5), randn(5, 3)
    ref = np.full((4, 7), -1.0)
    ref[:, 2:5] = a @ b
    for einsum in (False, True):
        for dtype in (np.float64, np.float32):
            (y,) = run(p, {"A": a, "B": b}, einsum=einsum, dtype=dtype)
            np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_non_injective_output_sums_anti_diagonals():
    p = program([t("X", (4, 5), "input"), t("Y", (8,), "output")], [k("diag", "i<4, j<5, r<1", "Y[i + j] += X[i, j]")])
    x = randn(4, 5)
    ref = np.array([sum(x[i, d - i] for i in range(4) if 0 <= d - i < 5) for d in range(8)])
    (y,) = run(p, {"X": x})
    np.testing.assert_allclose(y, ref, rtol=1e-14)


@pytest.mark.parametrize("einsum", [False, True], ids=["numba", "einsum"])
def test_keep_accumulates_onto_the_bias(einsum):
    p = program(
        [t("X", (3, 4), "input"), t("W", (4, 5), "weight"), t("b", (5,), "weight"), t("Y", (3, 5), "output")],
        [k("bias", "i<3, j<5", "Y[i, j] = b[j]"),
         k("mm", "i<3, j<5, c<4", "Y[i, j] += X[i, c] * W[c, j]", init="keep")],
    )
    x, w, b = randn(3, 4), randn(4, 5), randn(5)
    (y,) = run(p, {"X": x, "W": w, "b": b}, einsum=einsum)
    np.testing.assert_allclose(y, x @ w + b, rtol=1e-13)


def test_sum_over_an_empty_loop_is_the_identity():
    p = program([t("X", (3, 0), "input"), t("Y", (3,), "output")], [k("s", "i<3, j<0", "Y[i] += X[i, j]")])
    (y,) = run(p, {"X": np.zeros((3, 0))})
    np.testing.assert_array_equal(y, np.zeros(3))


# ------------------------------------------------------------------ a literal reference
_FUNCS = {"exp": math.exp, "select": lambda c, a, b: a if c else b,
          "max": lambda a, b: a if (a > b or a != a) else b, "min": lambda a, b: a if (a < b or a != a) else b}
_UPDATES = {"+=": operator.add, "*=": operator.mul, "max=": _FUNCS["max"], "min=": _FUNCS["min"]}
_IDENTITY = {"+=": 0.0, "*=": 1.0, "max=": -math.inf, "min=": math.inf}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Gt: operator.gt, ast.Lt: operator.lt, ast.USub: operator.neg, ast.Not: operator.not_}


def _subscripts(node):
    return node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]


def reference(p, values):
    """The IR's meaning, one iteration at a time in kernel order (slow, and obviously right)."""
    decl = p.tensor_map()
    env = {x.name: np.array(values[x.name], dtype=float) for x in p.tensors if x.role in ("input", "weight")}

    def ev(node, it):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return it[node.id] if node.id in it else {"inf": math.inf, "pi": math.pi}[node.id]
        if isinstance(node, ast.Subscript):
            at = tuple(ev(e, it) for e in _subscripts(node))
            t = decl[node.value.id]
            inside = all(0 <= i < n for i, n in zip(at, t.shape))
            return env[t.name][at] if inside else t.pad_value
        if isinstance(node, ast.Call):
            return _FUNCS[node.func.id](*(ev(a, it) for a in node.args))
        if isinstance(node, ast.BinOp):
            return _OPS[type(node.op)](ev(node.left, it), ev(node.right, it))
        if isinstance(node, ast.UnaryOp):
            return _OPS[type(node.op)](ev(node.operand, it))
        if isinstance(node, ast.Compare):
            return float(_OPS[type(node.ops[0])](ev(node.left, it), ev(node.comparators[0], it)))
        raise NotImplementedError(ast.unparse(node))

    for step in p.steps:
        if isinstance(step, Reshape):
            env[step.out] = env[step.src].reshape(decl[step.out].shape)
            continue
        out, expr = ast.parse(step.out, mode="eval").body, ast.parse(step.expr, mode="eval").body
        arr = env.setdefault(out.value.id, np.zeros(decl[out.value.id].shape))
        loops = [(lp.var, lp.extent) for lp in step.loops]
        out_loops = [(v, e) for v, e in loops if any(isinstance(n, ast.Name) and n.id == v for n in ast.walk(out))]
        if step.update != "=" and step.init == "identity":  # the written region starts at the identity
            for vals in itertools.product(*(range(e) for _, e in out_loops)):
                arr[tuple(ev(e, dict(zip([v for v, _ in out_loops], vals))) for e in _subscripts(out))] = \
                    _IDENTITY[step.update]
        for vals in itertools.product(*(range(e) for _, e in loops)):
            it = dict(zip([v for v, _ in loops], vals))
            at = tuple(ev(e, it) for e in _subscripts(out))
            value = ev(expr, it)
            arr[at] = value if step.update == "=" else _UPDATES[step.update](arr[at], value)
    return [env[n] for n in p.outputs]


TRICKY = {  # kernels whose loop order, accumulation form or init the code generator must get right
    "max_keep_transposed_into_a_slice": ("j<4, i<3", "Y[i, j + 1] max= X[j, i] * 2", "keep"),
    "min_over_outer_loop_goes_direct": ("j<5, i<4", "Y[0, j] min= X[i, j] - i", "identity"),
    "product_over_anti_diagonals": ("i<3, j<4", "Y[1, i + j] *= X[i, j]", "identity"),
    "select_with_a_padded_read": ("i<3, j<5", "Y[2, i] += select(X[i, j] > 0, X[i, j], Z[j - 1])", "identity"),
    "two_reductions_around_an_output_loop": ("a<3, b<2, c<4", "Y[a, c] += X[a + b, c] * Z[b + c]", "identity"),
}


@pytest.mark.parametrize("case", sorted(TRICKY))
def test_tricky_kernels_match_the_literal_reference(case):
    loops, stmt, init = TRICKY[case]
    p = program([t("X", (4, 5), "input"), t("Z", (5,), "weight", pad=5.0), t("Y", (4, 7), "output")],
                [k("fill", "i<4, j<7", "Y[i, j] = i * 0.5 - j"), k("kern", loops, stmt, init)])
    values = {"X": randn(4, 5), "Z": randn(5)}
    (ref,) = reference(p, values)
    for einsum in (False, True):
        (y,) = run(p, values, einsum=einsum)
        np.testing.assert_allclose(y, ref, rtol=1e-14, atol=1e-14, err_msg=f"einsum={einsum}")


# ------------------------------------------------------------------ composition and aliasing
def test_reshape_is_a_view_of_its_source():
    p = program(
        [t("X", (2, 6), "input"), t("E", (2, 6), "output"), t("R", (3, 4)), t("V", (12,)), t("Y", (3, 4), "output")],
        [k("exp", "i<2, j<6", "E[i, j] = exp(X[i, j])"),
         Reshape(name="r", src="E", out="R"),
         k("twice", "i<3, j<4", "Y[i, j] = R[i, j] * 2"),
         Reshape(name="flat", src="E", out="V"),
         k("bump", "f<12", "V[f] += 1.0", init="keep")],  # writes E's memory through the view
        outputs=("Y", "E"),
    )
    x = randn(2, 6)
    y, e = run(p, {"X": x})
    np.testing.assert_allclose(y, np.reshape(np.exp(x), (3, 4)) * 2, rtol=1e-14)
    np.testing.assert_allclose(e, np.exp(x) + 1, rtol=1e-14)


def test_a_kernel_reading_what_it_writes_runs_in_its_own_order():
    p = program([t("X", (6,), "input"), t("Y", (6,), "output", pad=0.0)], [k("scan", "i<6", "Y[i] = Y[i - 1] + X[i]")])
    x = randn(6)
    (y,) = run(p, {"X": x})
    np.testing.assert_allclose(y, np.cumsum(x), rtol=1e-14)


# ------------------------------------------------------------------ scalar functions, dtypes
FUNCTIONS = [  # (IR expression over X, P (positive), Z and i; NumPy reference)
    ("exp(X[i])", lambda x, p, z, i: np.exp(x)),
    ("log(P[i])", lambda x, p, z, i: np.log(p)),
    ("tanh(X[i])", lambda x, p, z, i: np.tanh(x)),
    ("erf(X[i])", lambda x, p, z, i: np.vectorize(math.erf)(x)),
    ("sqrt(P[i])", lambda x, p, z, i: np.sqrt(p)),
    ("rsqrt(P[i])", lambda x, p, z, i: 1 / np.sqrt(p)),
    ("sigmoid(X[i])", lambda x, p, z, i: 1 / (1 + np.exp(-x))),
    ("abs(X[i])", lambda x, p, z, i: np.abs(x)),
    ("neg(X[i])", lambda x, p, z, i: -x),
    ("sin(X[i]) + cos(X[i])", lambda x, p, z, i: np.sin(x) + np.cos(x)),
    ("floor(X[i]) * 10 + ceil(X[i])", lambda x, p, z, i: np.floor(x) * 10 + np.ceil(x)),
    ("log1p(P[i]) + expm1(X[i])", lambda x, p, z, i: np.log1p(p) + np.expm1(x)),
    ("sign(X[i]) + reciprocal(P[i])", lambda x, p, z, i: np.sign(x) + 1 / p),
    ("relu(X[i])", lambda x, p, z, i: np.maximum(x, 0)),
    ("max(X[i], Z[i]) - min(X[i], Z[i] * 2)", lambda x, p, z, i: np.maximum(x, z) - np.minimum(x, z * 2)),
    ("pow(P[i], X[i]) + P[i] ** 2", lambda x, p, z, i: p ** x + p ** 2),
    ("select(X[i] > Z[i], X[i], pi)", lambda x, p, z, i: np.where(x > z, x, np.pi)),
    ("(X[i] > 0) + (X[i] <= Z[i]) * 2", lambda x, p, z, i: (x > 0) + (x <= z) * 2.0),
    ("select(X[i] > 0 and not Z[i] > 0, 1, 0) + i", lambda x, p, z, i: ((x > 0) & ~(z > 0)) + i),
    ("min(X[i], inf) + 0 * max(X[i], -inf)", lambda x, p, z, i: x),
]


def test_scalar_functions_match_numpy_in_one_kernel():
    expr = "0.0"
    for f, (e, _) in reversed(list(enumerate(FUNCTIONS))):
        expr = f"select(f == {f}, {e}, {expr})"
    n, nf = 11, len(FUNCTIONS)
    p = program([t("X", (n,), "input"), t("P", (n,), "input"), t("Z", (n,), "input"), t("Y", (nf, n), "output")],
                [k("all", f"f<{nf}, i<{n}", f"Y[f, i] = {expr}")])
    x, z = randn(n) * 2, randn(n)
    pos = RNG.uniform(0.1, 3.0, n)
    (y,) = run(p, {"X": x, "P": pos, "Z": z})
    for f, (e, ref) in enumerate(FUNCTIONS):
        np.testing.assert_allclose(y[f], ref(x, pos, z, np.arange(n)), rtol=1e-13, atol=1e-15, err_msg=e)


def test_nan_and_inf_follow_ieee_not_python_exceptions():
    p = program([t("X", (4,), "input"), t("Y", (4,), "output")], [k("f", "i<4", "Y[i] = log(X[i]) + 1 / X[i] + sqrt(X[i])")])
    (y,) = run(p, {"X": np.array([0.0, -1.0, 1.0, np.inf])})
    assert np.isnan(y[0]) and np.isnan(y[1]) and y[2] == 2.0 and y[3] == np.inf


def test_integer_and_bool_tensors():
    p = program(
        [t("X", (5,), "input", dtype="int32"), t("F", (5,), "input"), t("Y", (5,), "output", dtype="int32"),
         t("Mk", (5,), "output", dtype="bool"), t("S", (), "output", dtype="int64")],
        [k("twice", "i<5", "Y[i] = X[i] * 2 + i"),
         k("mask", "i<5", "Mk[i] = F[i] > 0"),
         k("count", "i<5", "S[()] += Mk[i]")],
        outputs=("Y", "Mk", "S"),
    )
    x, f = np.arange(5, dtype=np.int32) - 2, randn(5)
    for dtype in (np.float64, np.float32):
        y, mk, s = run(p, {"X": x, "F": f}, dtype=dtype)
        assert (y.dtype, mk.dtype, s.dtype) == (np.int32, np.bool_, np.int64)
        np.testing.assert_array_equal(y, x * 2 + np.arange(5))
        np.testing.assert_array_equal(mk, f > 0)
        assert s == (f > 0).sum()


def test_float32_run_returns_declared_dtypes():
    p = program([t("X", (3,), "input", dtype="float16"), t("Y", (3,), "output", dtype="float16")],
                [k("sq", "i<3", "Y[i] = X[i] * X[i]")])
    x = np.array([1.5, -2.0, 3.0])
    (y16,) = run(p, {"X": x}, dtype=np.float32)
    (y64,) = run(p, {"X": x})
    assert y16.dtype == np.float16 and y64.dtype == np.float64
    np.testing.assert_array_equal(y16, (x * x).astype(np.float16))


# ------------------------------------------------------------------ einsum fast path = numba loops
EINSUM_CASES = {
    "batched_transposed": (
        [t("A", (2, 5, 3), "input"), t("B", (2, 4, 5), "weight"), t("Y", (2, 3, 4), "output")],
        "b<2, i<3, j<4, c<5", "Y[b, i, j] += A[b, c, i] * B[b, j, c]",
    ),
    "scaled_negated_reversed": (
        [t("A", (6, 4), "input"), t("B", (4,), "weight"), t("Y", (6,), "output")],
        "i<6, c<4", "Y[i] += -0.5 * A[5 - i, c] * B[3 - c]",
    ),
    "loop_nothing_indexes": (
        # a trip-count-1 loop: a longer one is rejected by the checker (it would inflate MACs)
        [t("A", (6, 4), "input"), t("Y", (6,), "output")], "i<6, c<4, rep<1", "Y[i] += A[i, c]",
    ),
    "diagonal": (
        [t("A", (5, 5), "input"), t("Y", (5, 5), "output")], "i<5, j<5", "Y[i, i] += A[i, j] * A[j, j]",
    ),
}


@pytest.mark.parametrize("case", sorted(EINSUM_CASES))
def test_einsum_fast_path_agrees_with_the_numba_loops(case):
    tensors, loops, stmt = EINSUM_CASES[case]
    p = program(tensors, [k("kern", loops, stmt)])
    assert plan_einsum(parse_kernel(p.steps[0]), p.tensor_map()) is not None
    values = {x.name: randn(*x.shape) for x in tensors if x.role != "output"}
    ex = Executor(p, einsum=True)
    (fast,) = ex.outputs(ex.run(ex.bind(bindings_of(p, values))))
    assert ex.records[0].path == "einsum"
    (loops_,) = run(p, values, einsum=False)
    np.testing.assert_allclose(fast, loops_, rtol=1e-13, atol=1e-14)


# ------------------------------------------------------------------ the compile cache
def test_compiled_module_is_cached_on_disk_and_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path))
    p = program([t("X", (7, 3), "input"), t("Y", (7,), "output")],
                [k("cubes", "i<7, j<3", "Y[i] += X[i, j] ** 3 - 0.123456789")])  # this test's own kernel
    x = randn(7, 3)

    def execute():
        ex = Executor(p)
        (y,) = ex.outputs(ex.run(ex.bind({"input:X": x})))
        np.testing.assert_allclose(y, (x ** 3 - 0.123456789).sum(1), rtol=1e-13)
        return ex.records[0].kernel_from

    assert execute() == "compiled"
    modules = list(cache_dir().glob("solar_kernel_*.py"))
    assert cache_dir() == tmp_path / "cache" / "numba" and len(modules) == 1
    assert list((cache_dir() / "__pycache__").glob(f"{modules[0].stem}*.nbi"))  # numba's index
    assert execute() == "memory"
    # a fresh process imports the same module file and loads numba's compiled code from disk;
    # forgetting the in-process dispatchers does the same here, without a second interpreter
    monkeypatch.setattr(cache, "_COMPILED", {})
    assert execute() == "disk"
    assert len(list(cache_dir().glob("solar_kernel_*.py"))) == 1


def test_same_kernel_under_other_names_shares_one_module():
    a = program([t("X", (4,), "input"), t("Y", (4,), "output")], [k("a", "i<4", "Y[i] = tanh(X[i])")])
    b = program([t("Inp", (4,), "input"), t("Out", (4,), "output")], [k("b", "z<4", "Out[z] = tanh(Inp[z])")],
                outputs=("Out",))
    pa, pb = plan_kernel(parse_kernel(a.steps[0]), a), plan_kernel(parse_kernel(b.steps[0]), b)
    assert pa.digest == pb.digest and pa.params == ("Y", "X") and pb.params == ("Out", "Inp")


# ------------------------------------------------------------------ errors
def test_missing_binding_and_wrong_shape_are_reported():
    with pytest.raises(ExecutionError, match=r"weight 'B' is bound to 'param:B', which the bindings lack"):
        execute_program(GEMM, {"input:A": randn(M, K)})
    with pytest.raises(ExecutionError, match=r"input 'A' \(input:A\) is declared \(13, 17\) but the binding has shape \(13, 16\)"):
        execute_program(GEMM, {"input:A": randn(M, 16), "param:B": randn(K, N)})
    with pytest.raises(ValueError, match="float64 or float32"):
        execute_program(GEMM, {}, dtype=np.float16)


def test_kernels_that_differ_only_in_subscript_constants_share_one_source():
    """Each step of an unrolled loop reads its own slice (``X[t, i, j]``) and a concatenation writes
    at its own offset: the constants are arguments (``codegen.Offsets``), so one compile serves all,
    and each still computes its own slice (checked against NumPy)."""
    x = randn(4, 3, 5)
    plans, outputs = [], []
    for step in range(4):
        p = program([t("X", (4, 3, 5), "input"), t("Y", (3, 5), "output")],
                    [k("pick", "i<3, j<5", f"Y[i, j] = X[{step}, i, j] * 2.0")])
        plans.append(plan_kernel(parse_kernel(p.steps[0]), p))
        (y,) = run(p, {"X": x}, einsum=False)
        outputs.append(y)
    assert len({pl.digest for pl in plans}) == 1 and [pl.offsets for pl in plans] == [(0,), (1,), (2,), (3,)]
    for step, y in enumerate(outputs):
        np.testing.assert_array_equal(y, x[step] * 2.0)
    cat = program([t("A", (2, 5), "input"), t("Y", (6, 5), "output")],
                  [k("place", "i<2, j<5", "Y[i + 4, j] = A[i, j]")])
    (y,) = run(cat, {"A": x[0, :2]}, einsum=False)
    np.testing.assert_array_equal(y[4:], x[0, :2])


def test_kernels_that_differ_only_in_float_constants_share_one_source():
    """A clamp's bounds, a scale, an epsilon: the expressions' float constants are arguments
    (``codegen.Literals``), so one compile serves every value, and each kernel still computes with
    its own (checked against NumPy); -0.0 stays apart from 0.0."""
    x = randn(7, 5)
    plans = []
    for lo, hi, scale in ((-1.0, 1.0, 2.5), (-0.25, 0.5, 1e-05), (0.0, 3.0, -7.0)):
        p = program([t("X", (7, 5), "input"), t("Y", (7, 5), "output")],
                    [k("clamp", "i<7, j<5", f"Y[i, j] = min(max(X[i, j], {lo}), {hi}) * {scale}")])
        plans.append(plan_kernel(parse_kernel(p.steps[0]), p))
        (y,) = run(p, {"X": x}, einsum=False)
        np.testing.assert_array_equal(y, np.minimum(np.maximum(x, lo), hi) * scale)
    assert len({pl.digest for pl in plans}) == 1
    assert [pl.literals for pl in plans] == [(-1.0, 1.0, 2.5), (-0.25, 0.5, 1e-05), (0.0, 3.0, -7.0)]
    assert "1e-05" not in plans[1].source and "2.5" not in plans[0].source
    signed = program([t("X", (3,), "input"), t("Y", (3,), "output")], [k("s", "i<3", "Y[i] = X[i] * -0.0 + 1.0")])
    plan = plan_kernel(parse_kernel(signed.steps[0]), signed)
    assert plan.literals == (-0.0, 1.0) and math.copysign(1.0, plan.literals[0]) == -1.0  # -0.0 kept
    (y,) = run(signed, {"X": np.array([1.0, -2.0, 0.5])}, einsum=False)
    np.testing.assert_array_equal(y, np.array([1.0, 1.0, 1.0]))


def test_an_elementwise_kernel_runs_as_one_loop_whatever_its_rank():
    """``Y[...] = f(X[...], Z[...], s)`` over whole tensors of one shape runs over the flat views
    (``execute.flatten``): one source at ranks 2, 3 and 4, and NumPy's values at each."""
    from solar_assets.execute.flatten import flat_kernel

    digests = set()
    for shape in ((6, 5), (2, 3, 5), (2, 1, 3, 4)):
        names = [f"i{d}" for d in range(len(shape))]
        loops = ", ".join(f"{v}<{n}" for v, n in zip(names, shape))
        sub = ", ".join(names)
        p = program([t("X", shape, "input"), t("Z", shape, "input"), t("S", (), "input"), t("Y", shape, "output")],
                    [k("ew", loops, f"Y[{sub}] = tanh(X[{sub}]) * S[()] + max(Z[{sub}], 0.5)")])
        pk = parse_kernel(p.steps[0])
        flat = flat_kernel(pk, p.tensor_map())
        assert flat is not None and [lp.extent for lp in flat[0].kernel.loops] == [int(np.prod(shape))]
        digests.add(plan_kernel(*flat).digest)
        x, z, s = randn(*shape), randn(*shape), np.array(1.5)
        (y,) = run(p, {"X": x, "Z": z, "S": s}, einsum=False)
        np.testing.assert_allclose(y, np.tanh(x) * 1.5 + np.maximum(z, 0.5), rtol=1e-14, atol=1e-15)  # (an fma)
    assert len(digests) == 1


@pytest.mark.parametrize("kind, tensors, stmt", [
    ("broadcast", [t("X", (4, 5), "input"), t("B", (5,), "input")], "Y[i, j] = X[i, j] + B[j]"),
    ("transpose", [t("X", (5, 4), "input")], "Y[i, j] = X[j, i]"),
    ("loop-value", [t("X", (4, 5), "input")], "Y[i, j] = X[i, j] * j"),
    ("padded", [t("X", (4, 5), "input", pad=0.0)], "Y[i, j] = X[i, j]"),
    ("larger", [t("X", (4, 6), "input")], "Y[i, j] = X[i, j]"),  # a read larger than the loop box
    ("accumulate", [t("X", (4, 5), "input")], "Y[i, j] += X[i, j]"),
], ids=lambda v: v if isinstance(v, str) and " " not in v else "")
def test_what_is_not_elementwise_over_whole_tensors_keeps_its_nest(kind, tensors, stmt):
    from solar_assets.execute.flatten import flat_kernel

    p = program([*tensors, t("Y", (4, 5), "output")], [k("nest", "i<4, j<5", stmt)])
    assert flat_kernel(parse_kernel(p.steps[0]), p.tensor_map()) is None
    values = {x.name: randn(*x.shape) for x in tensors}
    (y,) = run(p, values, einsum=False)
    x = values["X"]
    expected = {"broadcast": lambda: x + values["B"], "transpose": lambda: x.T, "loop-value": lambda: x * np.arange(5),
                "padded": lambda: x, "larger": lambda: x[:, :5], "accumulate": lambda: x}[kind]()
    np.testing.assert_array_equal(y, expected)
