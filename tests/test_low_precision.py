"""bf16, fp16 and fp8 end to end: traced dtypes, bytes at each tensor's width, golden runs that
respect casts, an executor that rounds where the program converts, and validation per dtype."""
from __future__ import annotations

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

from ir_schemas import Kernel, Loop, Program, TensorDecl
from solar_assets.coverage.flop_reference import flop_counter_flops
from solar_assets.execute import execute_program
from solar_assets.golden import make_golden
from solar_assets.golden.reference64 import run_float64
from solar_assets.graph import build_einsum_graph
from solar_assets.ir.dtypes import BYTES_PER_ELEMENT, ir_dtype_name, round_to
from solar_assets.translate import trace_torch
from solar_assets.validate import validate_program
from solar_assets.workloads import read_workload_source

REPO = Path(__file__).resolve().parents[1]
DECODER = REPO / "data/workloads/bf16_decoder_block.py"
FP8_GEMM = REPO / "data/workloads/fp8_gemm_scaled.py"

BF16_LINEAR = '''
import torch
import torch.nn as nn

batch_size = 8
in_features = 64
out_features = 32


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, dtype=torch.bfloat16)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]
'''

CAST_IN_FORWARD = '''
import torch
import torch.nn as nn

batch_size = 4
dim = 48


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.randn(dim, dim))

    def forward(self, x):
        h = x.to(torch.float16)
        y = h.to(torch.float32) @ self.w
        return torch.relu(y).to(torch.float16)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
'''


def _workload(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return read_workload_source(path)


def _validated(src):
    golden = make_golden(src)
    program = trace_torch(src).program
    return program, golden, validate_program(program, golden, source=src.path)


def test_dtype_names_are_one_map_for_torch_numpy_and_jax():
    import jax.numpy as jnp

    for name in ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "float32"):
        assert ir_dtype_name(getattr(torch, name)) == name
        assert ir_dtype_name(getattr(jnp, name)) == name
    assert ir_dtype_name(np.dtype(ml_dtypes.float8_e4m3fn)) == "float8_e4m3fn"
    assert ir_dtype_name(torch.complex64) is None
    assert (BYTES_PER_ELEMENT["float8_e4m3fn"], BYTES_PER_ELEMENT["float8_e5m2"], BYTES_PER_ELEMENT["bfloat16"]) \
        == (1, 1, 2)


def test_round_to_matches_torch_casts_including_fp8_saturation():
    values = np.array([0.1, -3.3, 1e-5, 300.0, 449.0, 500.0, -1e6, np.inf, 61440.0, np.nan])
    for dtype in ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"):
        want = torch.tensor(values).to(getattr(torch, dtype)).double().numpy()
        np.testing.assert_array_equal(round_to(values, dtype), want, err_msg=dtype)
    assert round_to(np.array([500.0, -np.inf]), "float8_e4m3fn").tolist() == [448.0, -448.0]


def test_bf16_linear_validates_with_bf16_tensors_and_bytes(tmp_path):
    src = _workload(tmp_path, "bf16_linear", BF16_LINEAR)
    program, golden, result = _validated(src)
    assert result.ok, str(result)
    assert {t.dtype for t in program.tensors if t.role != "intermediate"} == {"bfloat16"}
    # the golden values are the model's bf16 values (kept exactly, widened to float32)
    x = golden.inputs[0]
    assert x.dtype == np.float32 and np.array_equal(x, x.astype(ml_dtypes.bfloat16).astype(np.float32))
    graph = build_einsum_graph(program)
    assert graph.macs == 8 * 64 * 32
    # x (8×64), W (32×64), b (32), y (8×32): 2 bytes each
    assert graph.io_bytes == 2 * (8 * 64 + 32 * 64 + 32 + 8 * 32)


def test_cast_inside_forward_validates_with_the_strong_check(tmp_path):
    src = _workload(tmp_path, "cast_in_forward", CAST_IN_FORWARD)
    program, golden, result = _validated(src)
    assert result.ok, str(result)
    assert program.tensor(program.outputs[0]).dtype == "float16"
    strong = [c for c in result.checks if c.reference == "outputs64"]
    # casts only: IR and reference round alike, to the bit (the check allows one fp16 step for a value
    # on a rounding boundary, and needs none here)
    assert strong and all(c.max_abs_error == 0.0 and c.rtol <= 2.0 ** -10 for c in strong)


def test_float64_reference_rounds_at_casts_from_the_same_values():
    class Quantise(torch.nn.Module):
        def forward(self, x):
            return (x.to(torch.float8_e4m3fn).to(torch.float32) * 3.0).to(torch.bfloat16)

    x = torch.tensor([[0.3, -1.7, 600.0, 0.012]])
    got = run_float64(Quantise(), [x])
    assert got.dtype == torch.float64
    xs = x.double().numpy()
    want = round_to(round_to(xs, "float8_e4m3fn") * 3.0, "bfloat16")
    np.testing.assert_array_equal(got.numpy(), want)


def _k(name, loops, out, update, expr):
    return Kernel(name=name, loops=tuple(Loop(var=v, extent=e) for v, e in loops), out=out, update=update, expr=expr)


def test_executor_rounds_where_a_kernel_converts_into_a_narrow_dtype():
    program = Program(
        name="quantise",
        tensors=(
            TensorDecl(name="X", shape=(6,), dtype="float32", role="input", binding="input:0"),
            TensorDecl(name="Q", shape=(6,), dtype="float8_e4m3fn", role="intermediate"),
            TensorDecl(name="D", shape=(6,), dtype="float8_e4m3fn", role="intermediate"),
            TensorDecl(name="Y", shape=(6,), dtype="float32", role="output"),
        ),
        inputs=("X",), outputs=("Y",),
        steps=(
            _k("quant", [("i", 6)], "Q[i]", "=", "X[i]"),  # a conversion: rounds to e4m3
            _k("double", [("i", 6)], "D[i]", "=", "Q[i] * 1.1"),  # computes in e4m3 from e4m3: kept in float64
            _k("back", [("i", 6)], "Y[i]", "=", "D[i]"),
        ),
    )
    x = np.array([0.3, -1.7, 600.0, 0.012, 5.1, -0.07])
    (y,) = execute_program(program, {"input:0": x})
    np.testing.assert_allclose(y, round_to(x, "float8_e4m3fn") * 1.1, rtol=1e-15)


def test_a_partial_conversion_rounds_only_what_it_wrote():
    """Two kernels fill the halves of one bf16 tensor: the first converts float32 values (rounds),
    the second computes from bf16 values (kept in float64): only the first half is rounded."""
    program = Program(
        name="halves",
        tensors=(
            TensorDecl(name="X", shape=(4,), dtype="float32", role="input", binding="input:0"),
            TensorDecl(name="B", shape=(4,), dtype="bfloat16", role="input", binding="input:1"),
            TensorDecl(name="Y", shape=(8,), dtype="bfloat16", role="output"),
        ),
        inputs=("X", "B"), outputs=("Y",),
        steps=(
            _k("convert", [("i", 4)], "Y[i]", "=", "X[i] * 3.0"),
            _k("compute", [("i", 4)], "Y[i + 4]", "=", "B[i] * 3.0"),
        ),
    )
    x = np.array([0.1, 0.2, 0.3, 0.7])
    b = round_to(np.array([1.1, 1.3, -2.7, 0.01]), "bfloat16")
    (y,) = execute_program(program, {"input:0": x, "input:1": b})
    np.testing.assert_array_equal(y[:4], round_to(x * 3.0, "bfloat16"))
    np.testing.assert_array_equal(y[4:], b * 3.0)
    assert not np.array_equal(y[4:], round_to(b * 3.0, "bfloat16"))  # the case tells the two apart


def test_fp8_gemm_reads_one_byte_an_element_and_validates():
    src = read_workload_source(FP8_GEMM)
    program = trace_torch(src).program
    m, k, n = 128, 512, 1024
    tensors = program.tensor_map()
    inputs = {t.binding: t.dtype for t in program.tensors if t.role in ("input", "weight")}
    assert inputs == {"input:0": "float8_e4m3fn", "input:1": "float32", "buffer:weight": "float8_e4m3fn",
                      "buffer:weight_scale": "float32"}
    graph = build_einsum_graph(program)
    read = {name: op.bytes for name, op in graph.io.items() if tensors[name].role in ("input", "weight")}
    assert sum(read.values()) == m * k * 1 + k * n * 1 + 4 + 4
    assert graph.io_bytes == m * k + k * n + 4 + 4 + m * n * 2  # + the bf16 output
    assert graph.macs == m * n * k
    assert 2 * graph.macs == flop_counter_flops(FP8_GEMM)[0]  # FlopCounterMode counts aten._scaled_mm
    gemm = max(graph.nodes, key=lambda node: node.macs)  # the contraction reads the fp8 tensors themselves
    assert {tensors[t].dtype for t in gemm.reads} == {"float8_e4m3fn"}
    golden = make_golden(src)
    result = validate_program(program, golden, source=src.path)
    assert result.ok, str(result)


@pytest.mark.slow
def test_bf16_decoder_block_carries_bf16_and_counts_macs_like_flop_counter():
    src = read_workload_source(DECODER)
    program = trace_torch(src).program
    io = [t for t in program.tensors if t.role != "intermediate" and t.dtype != "float32"]
    assert {t.dtype for t in io} == {"bfloat16"}
    assert program.tensor(program.outputs[0]).dtype == "bfloat16"
    assert {t.dtype for t in program.tensors if t.binding in ("buffer:cos", "buffer:sin")} == {"float32"}
    graph = build_einsum_graph(program)
    flops, per_op = flop_counter_flops(DECODER)
    assert 2 * graph.macs == flops, per_op
    tokens, d, hd, kv, f, t = 2 * 64, 256, 32, 2 * 32, 512, 64
    projections = tokens * d * (d + 2 * kv) + tokens * d * d + 3 * tokens * d * f
    attention = 2 * (2 * 8 * t * t * hd)
    assert graph.macs == projections + attention
    x_bytes = tokens * d * 2  # the bf16 input, and the output of the same shape
    weights = 2 * (d * d + 2 * d * kv + d * d + 3 * d * f + 2 * d) + 4 * 2 * t * hd + 2 * t * t
    assert graph.io_bytes == x_bytes + weights + x_bytes
    golden = make_golden(src)
    result = validate_program(program, golden, source=src.path)
    assert result.ok, str(result)
    assert math.isclose(result.checks[-1].rtol, 1e-2 * max(1.0, math.sqrt(512 / 256)))
