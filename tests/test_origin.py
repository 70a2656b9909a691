"""IR steps carry their origin op; the graph groups nodes per framework op with one eager kernel's
DRAM bytes; a transposed conv writes only its cropped output; the agent's inflated IR is retried.

Every figure is hand-computed here from the sizes (4 bytes per float32 element)."""
from __future__ import annotations

import json
import operator
import textwrap
from pathlib import Path

import pytest

from ir_schemas import Cond, Repeat
from solar_assets.graph import build_einsum_graph, op_groups
from solar_assets.translate import trace_torch
from solar_assets.workloads import read_workload_source
from ir_programs import kernel, program, tensor
from workload_texts import TINY_LINEAR_RELU

F32 = 4


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def _all_steps(p):
    out = []

    def walk(steps):
        for st in steps:
            out.append(st)
            if isinstance(st, Repeat):
                walk(st.steps)
            elif isinstance(st, Cond):
                for b in st.branches:
                    walk(b)

    walk(p.steps)
    return out


CONV_NORM_LINEAR = """
    import torch
    import torch.nn as nn

    batch_size = 2
    in_channels = 3
    out_channels = 4
    height = 6
    width = 5
    kernel_size = 3
    out_features = 7


    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, features, out_features):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.norm = nn.LayerNorm(features)
            self.fc = nn.Linear(features, out_features)

        def forward(self, x):
            y = torch.flatten(self.conv(x), 1)
            return self.fc(self.norm(y))


    def get_inputs():
        return [torch.randn(batch_size, in_channels, height, width)]


    def get_init_inputs():
        features = out_channels * (height - kernel_size + 1) * (width - kernel_size + 1)
        return [in_channels, out_channels, kernel_size, features, out_features]
"""


def test_every_traced_torch_step_has_its_fx_node_as_origin(tmp_path):
    import torch

    path = _write(tmp_path, "conv_norm_linear", CONV_NORM_LINEAR)
    p = trace_torch(read_workload_source(path)).program
    steps = _all_steps(p)
    assert steps and all(st.origin is not None for st in steps)

    # the exported graph, counted here: each call_function node that PyTorch runs as a kernel
    # (not a free view: permute / t / getitem) is one group, in graph order
    from solar_assets.translate.torch_tracer import decomposition_table

    ns = {}
    exec(textwrap.dedent(CONV_NORM_LINEAR), ns)
    model = ns["Model"](*ns["get_init_inputs"]())
    ep = torch.export.export(model, tuple(ns["get_inputs"]())).run_decompositions(decomposition_table())
    calls = [n for n in ep.graph.nodes if n.op == "call_function"]
    free_views = {torch.ops.aten.permute.default, torch.ops.aten.t.default, operator.getitem}
    kernels = [n for n in calls if n.target not in free_views]
    groups = op_groups(build_einsum_graph(p))
    assert [g.key for g in groups] == [n.name for n in kernels]
    assert [g.origin.op for g in groups] == [str(n.target) for n in kernels]
    assert {st.origin.node for st in steps} <= {n.name for n in calls}

    by_op = {g.origin.op: g for g in groups}
    conv, norm, fc = (by_op[f"aten.{op}.default"] for op in ("convolution", "native_layer_norm", "addmm"))
    assert (conv.origin.module, norm.origin.module, fc.origin.module) == ("conv", "norm", "fc")
    b, cin, cout, h, w, k, o = 2, 3, 4, 6, 5, 3, 7
    features = cout * (h - k + 1) * (w - k + 1)
    assert conv.macs == b * cout * (h - k + 1) * (w - k + 1) * cin * k * k
    assert fc.macs == b * features * o
    # the conv reads x, weight and bias and writes its map once, though it is a bias kernel and a
    # product kernel in the IR
    assert conv.bytes == F32 * (b * cin * h * w + cout * cin * k * k + cout + b * features)
    # LayerNorm: x, weight and bias in, y out, once (mean and variance stay inside the op)
    assert norm.bytes == F32 * (b * features + 2 * features + b * features)


def test_every_traced_jax_step_has_its_equation_path_as_origin():
    import jax
    import jax.numpy as jnp

    from solar_assets.translate.jax_tracer import trace_function

    @jax.jit
    def dense(x, w):
        return jnp.tanh(x @ w)

    def fn(x, w):
        return jax.nn.softmax(dense(x, w) * 2.0, axis=-1), x.T  # a view output: copied, as "output"

    xs = [jax.ShapeDtypeStruct((4, 8), jnp.float32), jax.ShapeDtypeStruct((8, 3), jnp.float32)]
    p = trace_function(fn, xs)
    steps = _all_steps(p)
    assert steps and all(st.origin is not None for st in steps)

    # the equations, walked here: "eqn<i>" at the top, "eqn<i>.<j>" inside a sub-jaxpr; a jitted
    # call is one framework op (eager JAX dispatches it as one computation): its steps carry the
    # call's own path, op "jit:<name>" (issue 23)
    expected: dict[str, str] = {}

    def walk(jaxpr, prefix):
        for i, eqn in enumerate(jaxpr.eqns):
            expected[f"{prefix}{i}"] = eqn.primitive.name
            if eqn.primitive.name in ("jit", "pjit"):
                expected[f"{prefix}{i}"] = f"jit:{eqn.params['name']}"
                continue
            inner = eqn.params.get("jaxpr")
            if inner is not None:
                walk(getattr(inner, "jaxpr", inner), f"{prefix}{i}.")

    walk(jax.make_jaxpr(fn)(*xs).jaxpr, "eqn")
    expected["output"] = "output"
    assert all(expected[st.origin.node] == st.origin.op for st in steps), [(st.origin.node, st.origin.op) for st in steps]
    assert "jit:dense" in {st.origin.op for st in steps}
    assert [st.origin.node for st in steps].count("output") == 1
    jitted = [st for st in steps if st.origin.op == "jit:dense"]
    assert len(jitted) == 2 and len({st.origin.node for st in jitted}) == 1  # the dot and the tanh: one op
    assert jitted[0].origin.node.count(".") == 0  # the call's own top-level path, eqn<i>
    groups = op_groups(build_einsum_graph(p))
    assert len({g.key for g in groups}) == len(groups)
    assert sum(g.macs for g in groups) == 4 * 8 * 3


SOFTMAX_LAYERNORM = """
    import torch
    import torch.nn as nn

    batch_size = 6
    dim = 10


    class Model(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)

        def forward(self, x, z):
            return torch.softmax(x, dim=-1), self.norm(z)


    def get_inputs():
        return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


    def get_init_inputs():
        return [dim]
"""


def test_softmax_and_layernorm_groups_move_inputs_and_outputs_once(tmp_path):
    p = trace_torch(read_workload_source(_write(tmp_path, "softmax_ln", SOFTMAX_LAYERNORM))).program
    g = build_einsum_graph(p)
    groups = {grp.origin.op: grp for grp in op_groups(g)}
    softmax, norm = groups["aten._softmax.default"], groups["aten.native_layer_norm.default"]
    b, d = 6, 10
    assert len(softmax.nodes) >= 2 and len(norm.nodes) >= 2  # several IR kernels each
    assert softmax.bytes == F32 * (b * d + b * d)  # read x once, write y once
    assert norm.bytes == F32 * (b * d + d + d + b * d)  # x, weight, bias; y
    per_kernel = sum(g.node(n).bytes for n in softmax.nodes)
    assert per_kernel > softmax.bytes  # the per-IR-kernel figure re-reads x and the row statistics
    assert set(softmax.writes) == {p.outputs[0]}


def test_a_copy_inside_the_group_is_internal():
    """Attention-style: Kᵀ copied, then S = Q·Kᵀ, both lowered from one op: the copy is not charged."""
    L, D = 4, 3
    steps = [kernel("kt", [("d", D), ("j", L)], "KT[d, j]", "=", "K[j, d]"),
             kernel("s", [("i", L), ("j", L), ("d", D)], "S[i, j]", "+=", "Q[i, d] * KT[d, j]")]
    from ir_schemas import Origin

    origin = Origin(node="bmm", op="aten.bmm.default")
    steps = [st.model_copy(update={"origin": origin}) for st in steps]
    p = program(steps, [tensor("Q", (L, D), "input", pos=0), tensor("K", (L, D), "input", pos=1),
                        tensor("KT", (D, L)), tensor("S", (L, L), "output")])
    (grp,) = op_groups(build_einsum_graph(p))
    assert grp.nodes == ("kt", "s") and grp.macs == L * L * D
    assert grp.bytes == F32 * (L * D + L * D + L * L)
    unorigined = program([st.model_copy(update={"origin": None}) for st in steps], p.tensors)
    per_node = op_groups(build_einsum_graph(unorigined))  # no origin: each node is its own group
    assert [g.key for g in per_node] == ["kt", "s"]
    assert sum(g.bytes for g in per_node) == F32 * (2 * L * D + L * D + L * D + L * L)


TRANSPOSED = """
    import torch
    import torch.nn as nn

    batch_size = 2
    in_channels = 3
    out_channels = 5
    height = 6
    width = 7
    kernel_size = 4
    stride = 2
    padding = 1


    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
            super().__init__()
            self.up = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

        def forward(self, x):
            return self.up(x)


    def get_inputs():
        return [torch.randn(batch_size, in_channels, height, width)]


    def get_init_inputs():
        return [in_channels, out_channels, kernel_size, stride, padding]
"""


def test_transposed_conv_writes_only_the_cropped_output(tmp_path):
    from solar_assets.golden import make_golden
    from solar_assets.validate import validate_program

    src = read_workload_source(_write(tmp_path, "up", TRANSPOSED))
    p = trace_torch(src).program
    assert validate_program(p, make_golden(src), source=src.path).ok
    b, cin, cout, h, w, k, s, pad = 2, 3, 5, 6, 7, 4, 2, 1
    oh, ow = (h - 1) * s - 2 * pad + k, (w - 1) * s - 2 * pad + k
    assert all(max(t.shape[2:], default=0) <= max(oh, ow) for t in p.tensors if len(t.shape) == 4)
    g = build_einsum_graph(p)
    (grp,) = op_groups(g)
    assert grp.bytes == F32 * (b * cin * h * w + cin * cout * k * k + cout + b * cout * oh * ow)
    assert g.macs == b * cout * cin * h * w * k * k  # every real product, as FlopCounterMode counts
    written = [n for n in g.nodes if n.kind == "kernel"]
    assert {n.output for n in written} == {p.outputs[0]}  # no uncropped buffer, no crop copy


# ---------------------------------------------------------------------------- the agent's cost
TINY = TINY_LINEAR_RELU  # tests/workload_texts.py: one Linear + relu, 8 × 32 → 16


def _tiny_ir(halves: bool) -> dict:
    """The right IR, or one computing the product twice at half weight (right values, 2× MACs)."""
    loops = [{"var": "m", "extent": 8}, {"var": "n", "extent": 16}, {"var": "k", "extent": 32}]
    fc = [{"kind": "kernel", "name": "fc", "loops": loops, "out": "y[m, n]", "update": "+=",
           "expr": "x[m, k] * p_fc_weight[n, k]", "init": "keep"}]
    if halves:
        fc = [{**fc[0], "name": f"fc{i}", "expr": "x[m, k] * p_fc_weight[n, k] * 0.5"} for i in range(2)]
    mn = [{"var": "m", "extent": 8}, {"var": "n", "extent": 16}]
    return {
        "name": "tiny",
        "tensors": [
            {"name": "p_fc_weight", "shape": [16, 32], "dtype": "float32", "role": "weight", "binding": "param:fc.weight"},
            {"name": "p_fc_bias", "shape": [16], "dtype": "float32", "role": "weight", "binding": "param:fc.bias"},
            {"name": "x", "shape": [8, 32], "dtype": "float32", "role": "input", "binding": "input:0"},
            {"name": "y", "shape": [8, 16], "dtype": "float32", "role": "intermediate"},
            {"name": "out", "shape": [8, 16], "dtype": "float32", "role": "output"},
        ],
        "inputs": ["x"], "outputs": ["out"],
        "steps": [{"kind": "kernel", "name": "bias", "loops": mn, "out": "y[m, n]", "update": "=", "expr": "p_fc_bias[n]"},
                  *fc,
                  {"kind": "kernel", "name": "relu", "loops": mn, "out": "out[m, n]", "update": "=",
                   "expr": "max(y[m, n], 0.0)"}],
    }


def _reply(ir: dict):
    from langchain_core.messages import AIMessage

    return AIMessage(content=f"```json\n{json.dumps(ir)}\n```")


@pytest.fixture
def no_configured_model(monkeypatch):
    monkeypatch.delenv("SOLAR_LLM", raising=False)
    monkeypatch.delenv("SOLAR_TRANSLATOR", raising=False)


def test_an_inflated_agent_ir_is_retried_with_the_cost_diagnostic(tmp_path, no_configured_model):
    from langchain_core.language_models import GenericFakeChatModel

    from solar_assets.golden import make_golden
    from solar_assets.agent import translate_workload, use_chat_model

    src = read_workload_source(_write(tmp_path, "tiny", TINY))
    model = GenericFakeChatModel(messages=iter([_reply(_tiny_ir(halves=True)), _reply(_tiny_ir(halves=False))]))
    with use_chat_model(model, "fake:cost"):
        t = translate_workload(src, cache_dir=tmp_path / "cache", golden=lambda: make_golden(src))
    assert [a.accepted for a in t.attempt_log] == [False, True]
    (diag,) = t.attempt_log[0].diagnostics
    assert diag.startswith("cost:") and f"{2 * 8 * 16 * 32:,} MACs" in diag and f"tracer counts {8 * 16 * 32:,}" in diag
    assert build_einsum_graph(t.program).macs == 8 * 16 * 32


def test_without_a_tracer_ir_flop_counter_mode_is_the_reference(tmp_path, monkeypatch):
    from ir_schemas import Program
    from solar_assets.translate import TranslationError
    from solar_assets.agent import cost_check

    src = read_workload_source(_write(tmp_path, "tiny", TINY))

    def no_tracer(*_a, **_k):
        raise TranslationError("tracer unavailable in this test")

    monkeypatch.setattr(cost_check, "tracer_macs", no_tracer)
    check = cost_check.CostCheck(src)
    assert check.reference == cost_check.MacReference(8 * 16 * 32, "FlopCounterMode", contractions_only=True)
    assert check(Program.model_validate(_tiny_ir(halves=False))) == []
    (diag,) = check(Program.model_validate(_tiny_ir(halves=True)))
    assert "FlopCounterMode counts 4,096" in diag and "(2×)" in diag


def test_jax_transposed_conv_writes_its_output_directly():
    import jax
    import numpy as np

    from jax_checks import check

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 3, 4, 5)).astype(np.float32), rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    p = check(lambda x, w: jax.lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")),
              x, w)
    g = build_einsum_graph(p)
    assert {n.output for n in g.nodes if n.kind == "kernel"} == {p.outputs[0]}
    assert g.macs == 1 * 2 * 3 * (4 * 5) * (3 * 3)
    (grp,) = op_groups(g)
    assert grp.bytes == F32 * (1 * 3 * 4 * 5 + 2 * 3 * 3 * 3 + 1 * 2 * 8 * 10)


def test_the_validation_size_structure_check_ignores_origins(tmp_path):
    from ir_schemas import Origin
    from solar_assets.sizing import structure_difference

    p = trace_torch(read_workload_source(_write(tmp_path, "conv_norm_linear", CONV_NORM_LINEAR))).program
    assert {st.kind for st in p.steps} == {"kernel", "reshape"}
    renamed = p.model_copy(update={"steps": tuple(
        st.model_copy(update={"origin": Origin(node=f"other_{i}", op="x", module="m.7")})
        for i, st in enumerate(p.steps))})
    assert structure_difference(p, renamed) is None
