"""Node-wise validation: each op group checked on the framework's own values at the file's size.

The workloads are written as KernelBench writes them (lower-case sizes, a size hard-coded in
``get_inputs``); the point evaluator is checked against full execution of hand-written IR.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from ir_programs import attention, conv2d, gemm, kernel, program, tensor
from ir_schemas import Reshape, TopK
from solar_assets.execute import execute_program
from solar_assets.sizing import ValidationBudget, ValidationSizeError
from solar_assets.ir.expr import parse_kernel
from solar_assets.pipeline import analyze_workload, read_source, translate_source, validate_nodewise_stage
from solar_assets.validate.nodewise import LABEL, POINTS, sample_points, validate_nodewise
from solar_assets.validate.points import PointEvaluator

CONV_STACK = textwrap.dedent('''
    import torch
    import torch.nn as nn

    batch_size = 2
    num_classes = 10


    class Model(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 4, kernel_size=3, padding=1),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=4, stride=4),
            )
            self.classifier = nn.Linear(4 * 56 * 56, num_classes)

        def forward(self, x):
            x = self.features(x)
            x = torch.flatten(x, 1)
            return self.classifier(x)


    def get_inputs():
        return [torch.randn(batch_size, 3, 224, 224)]


    def get_init_inputs():
        return [num_classes]
''')

SOFTMAX_NORM = textwrap.dedent('''
    import torch
    import torch.nn as nn

    batch_size = 4
    seq_len = 12
    dim = 32


    class Model(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            return torch.softmax(self.norm(x) * 3.0, dim=-1)


    def get_inputs():
        return [torch.randn(batch_size, seq_len, dim)]


    def get_init_inputs():
        return [dim]
''')

GROUPNORM_MEAN = textwrap.dedent('''
    import torch
    import torch.nn as nn

    batch_size = 4
    channels = 8
    num_groups = 2
    size = 16


    class Model(nn.Module):
        def __init__(self, channels, num_groups):
            super().__init__()
            self.norm = nn.GroupNorm(num_groups, channels)

        def forward(self, x):
            return torch.mean(self.norm(x), dim=(1, 2, 3))


    def get_inputs():
        return [torch.randn(batch_size, channels, size, size) * 5.0 + 3.0]


    def get_init_inputs():
        return [channels, num_groups]
''')

GATHER_SCAN_SORT = '''
import torch
import torch.nn as nn

batch_size = 3
vocab = 50
dim = 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.bn = nn.BatchNorm1d(dim)
        self.up = nn.ConvTranspose1d(dim, 8, 4, stride=2, padding=1)

    def forward(self, idx, x):
        e = self.emb(idx)                      # gather
        h = torch.cat([e, x], dim=1)           # concat
        c = torch.cumsum(h, dim=1)
        a = torch.argmax(c, dim=2)
        t = torch.topk(c, 3, dim=2).values
        y = self.up(self.bn(c.transpose(1, 2)))
        s = torch.nn.functional.avg_pool1d(y, 2)
        return a, t, s, torch.where(c > 0, c, -c).sum(dim=-1)


def get_inputs():
    return [torch.randint(0, vocab, (batch_size, 7)), torch.randn(batch_size, 5, dim)]


def get_init_inputs():
    return []
'''

ATTENTION_SCATTER_GRU = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
heads = 2
seq = 8
dim = 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(dim, dim, batch_first=True)

    def forward(self, q, k, v, src):
        o = torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1) @ v
        out = torch.zeros(batch_size, seq).scatter_add(1, src, o.sum(dim=(1, 3)))
        r, _ = self.rnn(o.reshape(batch_size, heads * seq, dim))
        return out, F.gelu(r), o[:, :, 1:5:2]


def get_inputs():
    return [torch.randn(batch_size, heads, seq, dim), torch.randn(batch_size, heads, seq, dim),
            torch.randn(batch_size, heads, seq, dim), torch.randint(0, seq, (batch_size, seq))]


def get_init_inputs():
    return []
'''

TINY_BUDGET = ValidationBudget(tensor_bytes=1 << 20)  # 1 MiB: the 224x224 input alone is more


@pytest.fixture(scope="module")
def conv_stack(tmp_path_factory):
    path = tmp_path_factory.mktemp("nodewise") / "conv_stack.py"
    path.write_text(CONV_STACK)
    src = read_source(path)
    return src, translate_source(src, None)


@pytest.mark.slow
def test_hard_coded_224_input_validates_node_wise(conv_stack, tmp_path):
    """Rebinding batch_size cannot bring a 2x3x224x224 input (2.3 MiB in float64) under 1 MiB:
    the sizing gives up and the pipeline validates node-wise at the file's own size."""
    src, _ = conv_stack
    cache = tmp_path / "cache"
    for _ in range(2):  # the second run takes the passed verdict from the cache
        result = analyze_workload(src.path, ["H100_SXM"], cache_dir=cache, validation_budget=TINY_BUDGET,
                                  cache_aware=False)
        assert result.error is None, result.error
        assert result.validated_size == LABEL == f"node-wise {POINTS} points/kernel"
        assert [row.validated_size for row in result.rows] == [LABEL]
    assert len(list((cache / "verdict").rglob("*.json"))) == 1
    from solar_assets.report.table import _validated

    assert _validated(result.rows[0]) == "✓ node-wise"  # the table's validated column


def test_conv_stack_groups_and_sampling(conv_stack):
    src, translation = conv_stack
    result = validate_nodewise(src, translation)
    assert result.ok, str(result)
    groups = {c.name for c in result.checks}
    # one check per fx op: convolution, relu, max-pool, flatten (view), linear (addmm)
    assert groups >= {"convolution", "relu", "max_pool2d_with_indices", "view", "addmm"}
    conv = next(c for c in result.checks if c.name == "convolution")
    # 2*4*224*224 outputs x 27 taps is over the exact-check cost: sampled, 512 points
    assert f"{POINTS} sampled points" in conv.message
    flatten = next(c for c in result.checks if c.name == "view")  # 2 x 12544 elements: checked whole
    assert "every point" in flatten.message and flatten.max_abs_error == 0.0
    relu = next(c for c in result.checks if c.name == "relu")
    assert relu.max_abs_error == 0.0  # max(x, 0) in float64 of a float32 x is exact


def test_off_by_one_subscript_is_rejected_naming_group_and_kernel(conv_stack):
    """The convolution kernel reads its zero-padded input one row too low: still a legal IR (the
    pad covers it), but not what the framework computed."""
    src, translation = conv_stack
    steps = list(translation.program.steps)
    i = next(i for i, st in enumerate(steps) if st.name == "convolution")
    assert "p0 + r0 - 1" in steps[i].expr
    steps[i] = steps[i].model_copy(update={"expr": steps[i].expr.replace("p0 + r0 - 1", "p0 + r0")})
    broken = translation.__class__(**{**translation.__dict__,
                                      "program": translation.program.model_copy(update={"steps": tuple(steps)})})
    result = validate_nodewise(src, broken)
    assert not result.ok
    failures = result.failures()
    assert len(failures) == 1, failures
    assert "op group convolution" in failures[0] and "kernel convolution_bias, convolution" in failures[0]


def test_an_out_of_range_write_is_refused_not_sampled_past(conv_stack):
    """A write one row past its tensor (``Y[p0 + 1, ...]``) is an invalid IR: node-wise validation
    runs the checker first, as whole-program validation does, instead of evaluating the other rows."""
    from solar_assets.errors import IRError

    src, translation = conv_stack
    steps = list(translation.program.steps)
    i = next(i for i, st in enumerate(steps) if st.name == "relu")
    head, _, rest = steps[i].out.partition("[")
    steps[i] = steps[i].model_copy(update={"out": f"{head}[{rest.split(',', 1)[0]} + 1,{rest.split(',', 1)[1]}"})
    broken = translation.__class__(**{**translation.__dict__,
                                      "program": translation.program.model_copy(update={"steps": tuple(steps)})})
    with pytest.raises(IRError, match="ranges over"):
        validate_nodewise(src, broken)


def test_a_float32_program_is_held_to_float64_rounding(conv_stack):
    """The capture runs in float64 for a float32 program, so a group that differs from the framework
    by float32 rounding (1e-6) fails: the check is float64's, not float32's."""
    src, translation = conv_stack
    result = validate_nodewise(src, translation)
    assert result.ok and "in float64" in result.notes[0]
    steps = list(translation.program.steps)
    i = next(i for i, st in enumerate(steps) if st.name == "relu")
    steps[i] = steps[i].model_copy(update={"expr": f"({steps[i].expr}) * 1.000001"})
    nudged = translation.__class__(**{**translation.__dict__,
                                      "program": translation.program.model_copy(update={"steps": tuple(steps)})})
    assert not validate_nodewise(src, nudged).ok


# input 2*3*224*224 float32 = 1.148 MiB; weights (4*27 + 4 + 10*12544 + 10) float32 = 0.479 MiB
@pytest.mark.parametrize("budget_mib, expected", [
    (1, "at least 1.63 MiB for its inputs and weights"),  # refused before the model is built
    (3, "inputs 1.15 MiB, weights 0.479 MiB"),  # refused by the liveness estimate of the pass
])
def test_too_big_for_one_forward_pass_names_file_and_sizes(conv_stack, monkeypatch, budget_mib, expected):
    src, translation = conv_stack
    monkeypatch.setenv("SOLAR_NODEWISE_BYTES", str(budget_mib << 20))
    with pytest.raises(ValidationSizeError) as caught:
        validate_nodewise_stage(src, translation, ValidationSizeError(f"{src.path}: no scaled-down size worked"))
    message = str(caught.value)
    assert str(src.path) in message and "no scaled-down size worked" in message
    assert expected in message and f"budget of {budget_mib} MiB" in message


def test_softmax_and_layernorm_validate_node_wise(tmp_path):
    path = tmp_path / "softmax_norm.py"
    path.write_text(SOFTMAX_NORM)
    src = read_source(path)
    result = validate_nodewise(src, translate_source(src, None))
    assert result.ok, str(result)
    assert {"native_layer_norm", "mul", "_softmax"} <= {c.name for c in result.checks}


def test_mean_of_a_normalised_tensor_is_judged_by_what_it_summed(tmp_path):
    """A GroupNorm's output has mean ~0 per sample (weight 1, bias 0): the framework's float32
    mean is off by ~1e-9 from the exact one, far above 1e-4·max|result|, yet well within 1e-4
    of the summed magnitude Σ|x|/n ≈ 0.8."""
    path = tmp_path / "groupnorm_mean.py"
    path.write_text(GROUPNORM_MEAN)
    src = read_source(path)
    result = validate_nodewise(src, translate_source(src, None))
    assert result.ok, str(result)
    mean = next(c for c in result.checks if c.name == "mean")
    assert mean.max_abs_error > 10 * mean.tolerance_abs  # atol·max|ref| + rtol·|ref| alone would reject it
    assert "sum of |terms|" in mean.message


@pytest.mark.parametrize("text, ops", [
    (GATHER_SCAN_SORT, {"embedding", "cat", "cumsum", "argmax", "topk", "convolution", "avg_pool2d", "where"}),
    (ATTENTION_SCATTER_GRU, {"bmm", "_softmax", "scatter_add", "gru", "gelu"}),
], ids=["gather_scan_sort", "attention_scatter_gru"])
def test_composition_scan_and_recurrent_ops_validate_node_wise(tmp_path, text, ops):
    """Gathers, concatenation, a scan (a kernel reading its own output), top-k, a transposed
    convolution's phases, a scatter and a recurrent Repeat: each op group checked (the GRU's
    state, which no fx node holds whole, through the GELU that reads it)."""
    path = tmp_path / "ops.py"
    path.write_text(text)
    src = read_source(path)
    result = validate_nodewise(src, translate_source(src, None))
    assert result.ok, str(result)
    assert ops <= {c.name.split("/")[0] for c in result.checks}  # check names: node, or node/tensor


# ---------------------------------------------------------------------------- the point evaluator
def _extra_programs():
    """Kernels the evaluator treats specially: a strided (phased) write, a write whose subscript
    sums two variables (run whole), a keep-init accumulation, NaN through max=, TopK, Reshape,
    a kernel reading its own output (run whole, in order)."""
    phased = program(
        [kernel("even", [("q", 4), ("c", 3)], "Y[q*2, c]", "+=", "X[q, c] * 2.0"),
         kernel("odd", [("q", 4), ("c", 3)], "Y[q*2 + 1, c]", "=", "X[q, c] - 1.0")],
        [tensor("X", (4, 3), "input"), tensor("Y", (8, 3), "output")], name="phased")
    diagonal_sum = program(
        [kernel("band", [("i", 5), ("j", 3)], "Y[i + j]", "+=", "X[i] * K[j]")],
        [tensor("X", (5,), "input"), tensor("K", (3,), "input", pos=1), tensor("Y", (7,), "output")], name="band")
    keep = program(
        [kernel("first", [("i", 6), ("k", 4)], "Y[i]", "+=", "X[i, k]"),
         kernel("again", [("i", 6), ("k", 4)], "Y[i]", "max=", "X[i, k] * 3.0", init="keep"),
         kernel("scale", [("i", 6)], "Z[i]", "=", "select(Y[i] > 0.5, sigmoid(Y[i]), relu(Y[i]) - tanh(Y[i]))")],
        [tensor("X", (6, 4), "input"), tensor("Y", (6,), "intermediate"), tensor("Z", (6,), "output")], name="keep")
    ranked = program(
        [TopK(name="top", src="X", axis=1, k=2, values="V", indices="I"),
         Reshape(name="flat", src="V", out="F"),
         kernel("pick", [("i", 3), ("j", 2)], "O[i, j]", "=", "X[i, I[i, j]] + F[i*2 + j]")],
        [tensor("X", (3, 5), "input"), tensor("V", (3, 2)), tensor("I", (3, 2), dtype="int64"),
         tensor("F", (6,)), tensor("O", (3, 2), "output")], name="ranked")
    scan = program(  # reads what it writes: a cumulative sum, sequential in its loop order
        [kernel("cumsum", [("b", 2), ("i", 6)], "Y[b, i]", "=", "Y[b, i - 1] + X[b, i]")],
        [tensor("X", (2, 6), "input"), tensor("Y", (2, 6), "output", pad_value=0.0)], name="scan")
    return [phased, diagonal_sum, keep, ranked, scan]


@pytest.mark.parametrize("prog", [gemm(5, 7, 9), conv2d(2, 3, 9, 9, 4, 3, 3, 2, 1), attention(2, 2, 6, 4),
                                  *_extra_programs()], ids=lambda p: p.name)
def test_point_evaluator_matches_full_execution(prog):
    rng = np.random.default_rng(3)
    bindings = {t.binding: rng.standard_normal(t.shape) for t in prog.tensors if t.role in ("input", "weight")}
    if prog.name == "keep":
        bindings["input:0"][2, 1] = np.nan  # NaN propagates through += and max=
    full = execute_program(prog, bindings)
    tensors = prog.tensor_map()
    for name, ref in zip(prog.outputs, full):
        flat = sample_points(tuple(ref.shape), 7, name)  # a few points, corners included
        evaluator = PointEvaluator(prog, prog.steps, lambda t: bindings[tensors[t].binding])
        got = evaluator.value_at(name, flat)
        np.testing.assert_allclose(got, ref.reshape(-1)[flat], rtol=1e-12, atol=1e-12, equal_nan=True)
        whole = PointEvaluator(prog, prog.steps, lambda t: bindings[tensors[t].binding]).value_at(
            name, np.arange(ref.size))
        np.testing.assert_allclose(whole, ref.reshape(-1), rtol=1e-12, atol=1e-12, equal_nan=True)


def test_sample_points_are_seeded_distinct_and_include_corners():
    shape = (3, 50, 40)
    a, b = sample_points(shape, 64, "t"), sample_points(shape, 64, "t")
    assert np.array_equal(a, b) and len(set(a.tolist())) == 64
    corners = {int(np.ravel_multi_index(c, shape)) for c in [(0, 0, 0), (2, 49, 39), (2, 0, 39), (0, 49, 0)]}
    assert corners <= set(a.tolist())
    assert np.array_equal(sample_points((4, 5), 64, "t"), np.arange(20))


# ---------------------------------------------------------------------------- JAX
JAX_DENSE_SOFTMAX = textwrap.dedent('''
    import jax
    import jax.numpy as jnp

    batch_size = 8
    in_features = 24
    out_features = 16


    def get_inputs():
        k = jax.random.split(jax.random.key(0), 2)
        return [jax.random.normal(k[0], (batch_size, in_features)),
                jax.random.normal(k[1], (in_features, out_features)) * 0.2]


    def forward(x, w):
        return jax.nn.softmax(jnp.tanh(x @ w) * 2.0, axis=-1)
''')


def test_jax_workload_validates_node_wise_and_a_wrong_kernel_is_named(tmp_path):
    """Each top-level equation is a group (softmax's nested equations inside its own); a dot
    kernel reading the rows of x in reverse order (affine and in range: the IR checker accepts
    it) is rejected with its group and kernel."""
    pytest.importorskip("jax")
    path = tmp_path / "dense_softmax.py"
    path.write_text(JAX_DENSE_SOFTMAX)
    src = read_source(path)
    translation = translate_source(src, None)
    result = validate_nodewise(src, translation)
    assert result.ok, str(result)
    assert "node-wise (JAX)" in result.notes[0]
    steps = list(translation.program.steps)
    i = next(i for i, st in enumerate(steps) if getattr(st, "origin", None) and st.origin.op == "dot_general")
    pk = parse_kernel(steps[i])
    x_read = next(a for a in pk.reads if a.tensor == translation.program.inputs[0])
    row, col = (str(a) for a in x_read.index)
    wrong = f"{x_read.tensor}[7 - {row}, {col}]"  # batch_size = 8 rows
    x_read = str(x_read)
    steps[i] = steps[i].model_copy(update={"expr": steps[i].expr.replace(x_read, wrong)})
    broken = translation.__class__(**{**translation.__dict__,
                                      "program": translation.program.model_copy(update={"steps": tuple(steps)})})
    bad = validate_nodewise(src, broken)
    assert not bad.ok
    assert any(f"op group {steps[i].origin.node} (dot_general" in m and steps[i].name in m for m in bad.failures())


def test_jax_pipeline_falls_back_to_node_wise(tmp_path):
    """A budget of 64 bytes fits no size of the JAX file: the row is validated node-wise."""
    pytest.importorskip("jax")
    path = tmp_path / "dense_softmax.py"
    path.write_text(JAX_DENSE_SOFTMAX)
    result = analyze_workload(path, ["H100_SXM"], cache_dir=None, validation_budget=ValidationBudget(tensor_bytes=64),
                              cache_aware=False)
    assert result.error is None, result.error
    assert result.validated_size == LABEL and [row.validated_size for row in result.rows] == [LABEL]


def test_sample_points_cover_every_face_and_the_extreme_values():
    """A bug at a border (a loop one short) shows on one face; a wrong clamp bound only where the
    values are extreme: both are sampled, not left to the random draw."""
    shape = (40, 30, 20)
    values = np.zeros(int(np.prod(shape)))
    values[12345] = 9.0  # the one element above a clamp
    values[777] = -9.0
    flat = sample_points(shape, 64, "faces", values)
    coords = np.unravel_index(flat, shape)
    for d, extent in enumerate(shape):
        assert (coords[d] == 0).sum() >= 4 and (coords[d] == extent - 1).sum() >= 4
    assert {12345, 777} <= set(flat.tolist())
    assert len(set(flat.tolist())) == 64


DEVICE_MOVE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones(4, 1)))

    def forward(self, x):
        scale = torch.clamp(self.logit_scale.to(x.device), max=torch.log(torch.tensor(1. / 0.01, device=x.device)))
        return x * scale.exp()


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


def test_the_float64_pass_runs_past_the_exports_dtype_assertions(tmp_path):
    """``.to(x.device)`` exports an ``_assert_tensor_metadata`` of float32 (SwinTransformerV2's logit
    scale): the float64 capture must not run it, or every such model fails node-wise."""
    path = tmp_path / "device_move.py"
    path.write_text(DEVICE_MOVE)
    src = read_source(path)
    result = validate_nodewise(src, translate_source(src, None))
    assert result.ok, result.failures()
    assert "in float64" in result.notes[0]


def _off_by_one(translation):
    steps = list(translation.program.steps)
    i = next(i for i, st in enumerate(steps) if st.name == "convolution")
    steps[i] = steps[i].model_copy(update={"expr": steps[i].expr.replace("p0 + r0 - 1", "p0 + r0")})
    return translation.__class__(**{**translation.__dict__,
                                    "program": translation.program.model_copy(update={"steps": tuple(steps)})})


def test_the_checking_runs_in_the_checker_process_out_of_the_workloads_reach(conv_stack, monkeypatch):
    """In a worker the framework pass runs beside the workload, and each group's evaluation, the
    comparison and the verdict in the checker (``workers.checker.NodewiseSession``): the same
    verdict as in process, and a verdict function replaced in the worker's process (as a workload
    could leave it) does not pass a wrong IR."""
    from solar_assets.validate import nodewise_check
    from solar_assets.validate.compare import ValidationResult
    from solar_assets.workers.checker import Checker, NodewiseSession

    src, translation = conv_stack
    checker = Checker()
    try:
        remote = validate_nodewise(src, translation, make_checker=lambda *setup: NodewiseSession(checker, *setup))
        local = validate_nodewise(src, translation)
        assert remote.ok and local.ok
        assert [(c.name, c.message) for c in remote.checks] == [(c.name, c.message) for c in local.checks]
        assert remote.notes[0].split("(")[0] == local.notes[0].split("(")[0]

        monkeypatch.setattr(nodewise_check, "checker_result",
                            lambda *a, **k: ValidationResult(ok=True, checks=[], max_abs_error=0.0,
                                                             max_rel_error=0.0, seconds=0.0))
        broken = _off_by_one(translation)
        assert validate_nodewise(src, broken).ok  # in process, the replaced function decides
        refused = validate_nodewise(src, broken, make_checker=lambda *setup: NodewiseSession(checker, *setup))
        assert not refused.ok and any("op group convolution" in f for f in refused.failures())
        # the checker serves the next pass after a refused one
        again = validate_nodewise(src, translation, make_checker=lambda *setup: NodewiseSession(checker, *setup))
        assert again.ok
    finally:
        checker.stop()


FAN_OUT = textwrap.dedent('''
    import torch
    import torch.nn as nn

    rows = 512


    class Model(nn.Module):
        def forward(self, x):
            y = torch.tanh(x)
            return y * 2 + y.sin() + y.exp() - y.abs()


    def get_inputs():
        return [torch.randn(rows, 1024)]


    def get_init_inputs():
        return []
''')


def test_the_checker_asks_once_for_a_value_several_groups_read(tmp_path, monkeypatch):
    """tanh's 4 MiB result is read by four later groups: the checker keeps what it received while
    the worker holds it live (``workers.checker._ReceivedValues``), so it is sent once, and the
    verdict is the in-process one."""
    from solar_assets.workers import checker as checker_module
    from solar_assets.workers.checker import Checker, NodewiseSession

    path = tmp_path / "fan_out.py"
    path.write_text(FAN_OUT)
    src = read_source(path)
    translation = translate_source(src, None)
    asked: list[str] = []
    sent = checker_module.send

    def counting_send(conn, obj):
        asked.append(obj)
        return sent(conn, obj)

    monkeypatch.setattr(checker_module, "send", counting_send)
    checker = Checker()
    try:
        remote = validate_nodewise(src, translation, make_checker=lambda *setup: NodewiseSession(checker, *setup))
    finally:
        checker.stop()
    local = validate_nodewise(src, translation)
    assert remote.ok and [(c.name, c.message) for c in remote.checks] == [(c.name, c.message) for c in local.checks]
    big = [a for a in asked if isinstance(a, np.ndarray) and a.nbytes >= (1 << 20)]
    assert all(a.shape == (512, 1024) for a in big)
    # each of the nine values (x, tanh, its four readers, the three sums) sent once; sent per
    # reading group, tanh's alone went five times (its check and four readers), twenty in all
    assert len(big) == 9, len(big)


def test_received_values_are_kept_within_their_bytes_and_only_while_live():
    from solar_assets.workers.checker import _ReceivedValues

    kept = _ReceivedValues(limit=3 * 800)
    for name in "abcd":
        kept.keep(name, np.zeros(100))  # 800 bytes each
    assert kept.get("a") is None and kept.get("b") is not None  # the least recently used went first
    kept.keep("e", np.zeros(100))
    assert kept.get("c") is None and kept.get("b") is not None and kept.get("e") is not None
    with pytest.raises(ValueError):
        kept.get("b")[0] = 1.0  # read-only: a later group reads the very array
    kept.only(frozenset({"e"}))
    assert kept.get("b") is None and kept.get("d") is None and kept.get("e") is not None
    kept.keep("huge", np.zeros(1000))  # over the limit alone: not kept
    assert kept.get("huge") is None and kept.get("e") is not None


def test_node_wise_validation_in_a_worker_goes_through_its_checker(conv_stack, tmp_path):
    """As ``solar analyze`` runs it: the worker's checker answers the node-wise pass."""
    from solar_assets.chain.config import RunConfig
    from solar_assets.asset_compute.plain import analyze_in_workers

    src, _ = conv_stack
    [result] = analyze_in_workers([src.path], ["H100_SXM"], cache_dir=tmp_path / "cache", jobs=1,
                                  config=RunConfig(validation_budget=TINY_BUDGET), cache_aware=False)
    assert result.error is None, result.error
    assert result.validated_size == LABEL


RETURNS_THREE = textwrap.dedent('''
    import torch
    import torch.nn as nn

    rows = 64


    class Model(nn.Module):
        def forward(self, x):
            return x * 2, x * 3, torch.nan * x


    def get_inputs():
        return [torch.randn(rows, 256)]


    def get_init_inputs():
        return []
''')


def test_returned_values_are_not_held_to_the_end_of_the_pass(tmp_path):
    """Three returned products of the input: the pass holds one of them at a time (each is seen as
    it is made), not all three to the return, as a training step's updated parameters and states."""
    from solar_assets.golden.capture import estimate_capture
    from solar_assets.validate.nodewise import relower_with_values

    path = tmp_path / "returns_three.py"
    path.write_text(RETURNS_THREE)
    ep, _, _, _ = relower_with_values(read_source(path))
    one = 64 * 256 * 4
    assert estimate_capture(ep).peak_intermediate_bytes == one


def test_a_returned_value_is_refused_node_wise_from_its_summary(tmp_path):
    """The all-NaN third output is refused although the pass freed it long before its return."""
    path = tmp_path / "returns_three.py"
    path.write_text(RETURNS_THREE)
    src = read_source(path)
    result = validate_nodewise(src, translate_source(src))
    assert not result.ok
    failures = result.failures()
    assert len(failures) == 1 and "is all NaN/inf (shape (64, 256))" in failures[0]


def _nudged(translation, name: str, factor: str = "1.000001"):
    steps = list(translation.program.steps)
    i = next(i for i, st in enumerate(steps) if st.name == name)
    steps[i] = steps[i].model_copy(update={"expr": f"({steps[i].expr}) * {factor}"})
    return translation.__class__(**{**translation.__dict__,
                                    "program": translation.program.model_copy(update={"steps": tuple(steps)})})


def test_a_float32_value_further_off_than_its_tolerance_is_judged_against_the_op_in_float64(conv_stack, monkeypatch):
    """A pass too big to run in float64 compares the IR with the framework's float32 values; a float32
    sum of millions of terms (level 2's 85: a convolution's weight gradient over 128x126x126 terms)
    strays up to 1e-3 of its summed terms from the exact sum, past float32's 1e-4. There the op is run
    again in float64 on the same float32 inputs and the IR is held to that at float64's tolerance.
    Here float32's tolerance is made 1e-12, so every float32 rounding is "too far": the right IR
    passes through the float64 recompute, an IR off by 1e-6 or reading one row too low does not."""
    from solar_assets.validate import compare, nodewise

    src, translation = conv_stack
    monkeypatch.setattr(nodewise, "FLOAT64_REFERENCE", False)
    monkeypatch.setitem(compare.TOLERANCES, "float32", (1e-12, 1e-12))
    result = validate_nodewise(src, translation)
    assert result.ok, result.failures()
    assert "in float64" not in result.notes[0]  # the pass itself ran in float32
    recomputed = {c.name for c in result.checks if "recomputed in float64" in c.message}
    assert {"convolution", "addmm"} <= recomputed, [c.message for c in result.checks]
    for broken in (_nudged(translation, "convolution"), _off_by_one(translation)):
        refused = validate_nodewise(src, broken)
        assert not refused.ok and any("op group convolution" in f for f in refused.failures())


def test_the_checker_process_asks_the_worker_for_the_float64_recompute():
    """The checker (``_RemoteLive.float64``) asks, the worker's session answers from its pass's
    ``CapturedValues.float64``, as NumPy; None where the worker has none."""
    import threading
    from multiprocessing import Pipe

    import torch

    from solar_assets.golden.capture import CapturedValues
    from solar_assets.workers.checker import NodewiseSession, _RemoteLive

    worker_end, checker_end = Pipe()
    live = CapturedValues(lambda values, name: torch.arange(3, dtype=torch.float64) if name == "mm" else None)
    live["mm"] = torch.zeros(3)
    got = {}

    def checker():
        checker_end.recv()  # the session's message
        remote = _RemoteLive(checker_end, frozenset(live))
        got["mm"], got["other"] = remote.float64("mm"), remote.float64("other")
        checker_end.send(("ok", "done"))

    thread = threading.Thread(target=checker)
    thread.start()
    session = object.__new__(NodewiseSession)  # the session without starting a pass in a checker
    session._checker = type("C", (), {"conn": worker_end})()
    assert session._call(("node", "mm", frozenset(live)), live) == "done"
    thread.join()
    np.testing.assert_array_equal(got["mm"], np.arange(3.0))
    assert got["mm"].dtype == np.float64 and got["other"] is None


TRANSPOSED = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """A padded transposed convolution, then Swish."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        x = self.conv_transpose(x)
        return torch.sigmoid(x) * x


batch_size = 2
in_channels = 3
out_channels = 4
height, width = 10, 12
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
'''


def test_an_ir_only_tensor_too_big_to_evaluate_whole_is_evaluated_where_later_groups_read_it(tmp_path, monkeypatch):
    """A padded transposed convolution writes an uncropped tensor no framework value holds; the
    groups after it read its crop. Over the whole-evaluation limit (level 2's 60: 35.7 M elements,
    here the limit is lowered to 4,000) its points are evaluated where the later groups read them,
    so those groups check it; a convolution reading its kernel transposed is still rejected there."""
    from solar_assets.validate import points

    path = tmp_path / "transposed.py"
    path.write_text(TRANSPOSED)
    src = read_source(path)
    translation = translate_source(src, None)
    full = next(t for t in translation.program.tensors if t.name == "convolution_full")
    assert full.role not in ("input", "output") and np.prod(full.shape) == 2 * 4 * 21 * 25
    monkeypatch.setattr(points, "WHOLE_LIMIT", 4000)  # under the uncropped 4,200: never evaluated whole
    result = validate_nodewise(src, translation)
    assert result.ok, result.failures()
    conv = next(c for c in result.checks if c.name == "convolution")
    assert "feed the later groups" in conv.message
    steps = list(translation.program.steps)
    i = next(i for i, st in enumerate(steps) if st.name == "convolution")
    steps[i] = steps[i].model_copy(update={"expr": steps[i].expr.replace("[c, k, r0, r1]", "[c, k, r1, r0]")})
    assert steps[i].expr != translation.program.steps[i].expr, steps[i].expr
    broken = translation.__class__(**{**translation.__dict__,
                                      "program": translation.program.model_copy(update={"steps": tuple(steps)})})
    assert not validate_nodewise(src, broken).ok
