"""Per-node peaks: each node on its own unit and dtype, units concurrent, unfused per framework op.

Every expected figure is worked in the test from the shapes and the spec's own peaks and
bandwidth (the issue's figures are checked as a sanity band around them).
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from ir_programs import conv2d, kernel, program, tensor
from solar_assets.bounds import sol_bounds
from solar_assets.bounds.units import Fp32Math, fp32_math_for
from solar_assets.graph import build_einsum_graph
from solar_assets.hardware import load_hardware

H100 = load_hardware("H100_SXM")
BW = H100.dram_bytes_per_s
TF32 = H100.peak_flop_per_s.matrix["tf32"]
FP32_VECTOR = H100.peak_flop_per_s.vector["fp32"]
FP16_MATRIX = H100.peak_flop_per_s.matrix["fp16"]
REPO = Path(__file__).resolve().parents[1]


def tag(graph, **origins):
    """Give nodes the origin op they were lowered from (``node=(origin_node, op)``), as the tracer
    does once IR steps carry ``origin``; a frozen dataclass field set in place, for the test only."""
    for node in graph.nodes:
        if node.name in origins:
            origin_node, op = origins[node.name]
            object.__setattr__(node, "origin", SimpleNamespace(node=origin_node, op=op, module=""))
    return graph


# --- (a) a KernelBench-style conv: TF32 by default in PyTorch, memory-bound -----------------------
# class Model(nn.Module): nn.Conv2d(in_channels=16, out_channels=128, kernel_size=3)
batch_size, in_channels, out_channels, height, width, kernel_size = 16, 16, 128, 1024, 1024, 3


def test_pytorch_conv_runs_on_tf32_and_is_memory_bound():
    g = tag(build_einsum_graph(conv2d(batch_size, in_channels, height, width, out_channels,
                                      kernel_size, kernel_size, 1, 0)),
            conv=("convolution", "aten.convolution.default"))
    out = height - kernel_size + 1
    flops = 2 * batch_size * out_channels * out * out * in_channels * kernel_size * kernel_size
    nbytes = 4 * (batch_size * in_channels * height * width
                  + out_channels * in_channels * kernel_size * kernel_size
                  + batch_size * out_channels * out * out)
    b = sol_bounds(g, H100)
    assert b.fused.time_s == pytest.approx(max(flops / TF32, nbytes / BW))
    assert b.fused.limiter == "memory" and nbytes / BW > flops / TF32
    assert b.fused.time_s == pytest.approx(2.9e-3, rel=0.02)  # the figure
    assert b.per_node[0].unit == "matrix.tf32" and b.compute_unit == "matrix"
    # the old single fp32 peak: compute-bound at 9.2 ms; still what --fp32-math ieee gives
    ieee = sol_bounds(g, H100, fp32_math="ieee")
    assert ieee.fused.time_s == pytest.approx(flops / FP32_VECTOR) == pytest.approx(9.2e-3, rel=0.01)
    assert ieee.fused.limiter == "compute" and ieee.per_node[0].unit == "vector.fp32"


def test_fp32_contraction_policy_by_origin():
    g = build_einsum_graph(conv2d(1, 4, 8, 8, 4, 3, 3, 1, 0))
    assert sol_bounds(g, H100).per_node[0].unit == "matrix.tf32"  # no origin: the lower bound (TF32)
    tag(g, conv=("mm_1", "aten.mm.default"))
    assert sol_bounds(g, H100).per_node[0].unit == "vector.fp32"  # a PyTorch matmul: IEEE by default
    enabled = fp32_math_for("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    assert sol_bounds(g, H100, fp32_math=enabled).per_node[0].unit == "matrix.tf32"
    medium = fp32_math_for("torch.set_float32_matmul_precision('medium')")
    assert sol_bounds(g, H100, fp32_math=medium).per_node[0].unit == "matrix.bf16"
    tag(g, conv=("dot_general_3", "dot_general"))
    assert sol_bounds(g, H100).per_node[0].unit == "matrix.tf32"  # JAX: TF32 by default on GPUs
    highest = fp32_math_for('jax.config.update("jax_default_matmul_precision", "highest")')
    assert sol_bounds(g, H100, fp32_math=highest).per_node[0].unit == "vector.fp32"
    assert sol_bounds(g, H100, fp32_math="tf32").per_node[0].unit == "matrix.tf32"


def test_fp32_math_from_source_text():
    assert fp32_math_for("") == Fp32Math()
    assert fp32_math_for("torch.set_float32_matmul_precision('high')").torch_matmul == "tf32"
    assert fp32_math_for("torch.set_float32_matmul_precision('highest')").torch_matmul == "ieee"
    assert fp32_math_for("torch.backends.cudnn.allow_tf32 = False").torch_conv == "ieee"
    assert fp32_math_for("x", "ieee").describe() == "ieee"
    assert "torch matmul ieee" in Fp32Math().describe()


# --- (b) one peak for the whole program no more -------------------------------------------------
def test_fp16_gemm_beside_fp32_elementwise():
    n, elems = 4096, 3 * 4096 * 4096
    p = program(
        [kernel("mm", [("m", n), ("j", n), ("k", n)], "C[m, j]", "+=", "A[m, k] * B[k, j]"),
         kernel("scale", [("i", elems)], "Z[i]", "=", "X[i] * 2.0")],
        [tensor("A", (n, n), "input", "float16", 0), tensor("B", (n, n), "input", "float16", 1),
         tensor("X", (elems,), "input", "float32", 2), tensor("C", (n, n), "output", "float16"),
         tensor("Z", (elems,), "output", "float32")])
    g = build_einsum_graph(p)
    assert g.dtype == "float32"  # the dtype moving the most bytes: the old single peak
    b = sol_bounds(g, H100)
    compute_s = max(2 * n**3 / FP16_MATRIX, elems / FP32_VECTOR)
    nbytes = 3 * n * n * 2 + 2 * elems * 4
    assert b.fused.time_s == pytest.approx(max(compute_s, nbytes / BW))
    assert b.fused.time_s == pytest.approx(0.150e-3, rel=0.01)  # the valid bound
    assert 2 * n**3 / FP32_VECTOR == pytest.approx(2.05e-3, rel=0.01)  # what one fp32 peak charged
    assert b.fused.limiter == "memory"


# --- (c) the shipped JAX attention: its dots on the TF32 tensor cores ----------------------------
def test_jax_attention_dots_use_tf32():
    from solar_assets import pipeline

    src = pipeline.read_source(REPO / "data" / "workloads" / "jax_attention.py")
    g = build_einsum_graph(pipeline.translate_source(src, None, translator="tracer").program)
    b = sol_bounds(g, H100, fp32_math=pipeline.fp32_math_of(src))
    by_name = {nb.name: nb for nb in b.per_node}
    contractions = [n for n in g.nodes if n.macs]
    assert len(contractions) >= 6  # q, k, v, scores, p·v, output projection
    for n in contractions:
        assert by_name[n.name].unit == "matrix.tf32"
        assert by_name[n.name].compute_s == pytest.approx(2 * n.macs / TF32)
    for n in g.nodes:
        if n.flops and not n.macs:
            assert by_name[n.name].unit == "vector.fp32"
    assert "matrix" in b.peaks_fused() and "tf32 4.947e+14" in b.peaks_fused()


# --- (d) units run concurrently: compute time is the busiest unit's --------------------------------
def test_compute_time_is_the_busiest_unit():
    m = 512
    elems = 10_000_000
    p = program(
        [kernel("mm", [("i", m), ("j", m), ("k", m)], "C[i, j]", "+=", "A[i, k] * B[k, j]"),
         kernel("act", [("e", elems)], "Y[e]", "=", "exp(X[e])")],
        [tensor("A", (m, m), "input", "bfloat16", 0), tensor("B", (m, m), "input", "bfloat16", 1),
         tensor("X", (elems,), "input", "float32", 2), tensor("C", (m, m), "output", "bfloat16"),
         tensor("Y", (elems,), "output", "float32")])
    g = build_einsum_graph(p)
    b = sol_bounds(g, H100)
    matrix_s = 2 * m**3 / H100.peak_flop_per_s.matrix["bf16"]  # 2.71e-7 s
    vector_s = elems / FP32_VECTOR  # one exp per element: 1.49e-7 s
    assert b.compute_s == pytest.approx(max(matrix_s, vector_s)) and b.compute_unit == "matrix"
    assert b.compute_s < matrix_s + vector_s  # never the sum across units
    assert b.peak_flop_per_s == pytest.approx(g.flops / max(matrix_s, vector_s))
    assert b.fused.time_s == pytest.approx(max(matrix_s, vector_s, g.io_bytes / BW))
    # two contractions of different dtypes share the tensor cores: their times add
    p2 = program(
        [kernel("mm", [("i", m), ("j", m), ("k", m)], "C[i, j]", "+=", "A[i, k] * B[k, j]"),
         kernel("mm32", [("i", m), ("j", m), ("k", m)], "D[i, j]", "+=", "E[i, k] * F[k, j]")],
        [tensor("A", (m, m), "input", "bfloat16", 0), tensor("B", (m, m), "input", "bfloat16", 1),
         tensor("E", (m, m), "input", "float32", 2), tensor("F", (m, m), "input", "float32", 3),
         tensor("C", (m, m), "output", "bfloat16"), tensor("D", (m, m), "output", "float32")])
    b2 = sol_bounds(build_einsum_graph(p2), H100)
    assert b2.compute_s == pytest.approx(matrix_s + 2 * m**3 / TF32)
    assert [u.key for u in b2.units] == ["matrix"]


# --- (e) unfused per framework op: a softmax moves what one eager kernel moves -----------------------
def test_softmax_unfused_per_op_reads_x_once_and_writes_y_once():
    rows, cols = 256, 1024
    loops = [("r", rows), ("c", cols)]
    p = program(
        [kernel("rowmax", loops, "m[r]", "max=", "x[r, c]"),
         kernel("expo", loops, "e[r, c]", "=", "exp(x[r, c] - m[r])"),
         kernel("rowsum", loops, "s[r]", "+=", "e[r, c]"),
         kernel("norm", loops, "y[r, c]", "=", "e[r, c] / s[r]")],
        [tensor("x", (rows, cols), "input"), tensor("m", (rows,)), tensor("e", (rows, cols)),
         tensor("s", (rows,)), tensor("y", (rows, cols), "output")])
    g = build_einsum_graph(p)
    per_kernel = sol_bounds(g, H100)
    assert per_kernel.unfused.bytes == g.bytes_unfused  # no origin: every IR kernel its own round trip
    op = "aten._softmax.default"
    tag(g, rowmax=("softmax", op), expo=("softmax", op), rowsum=("softmax", op), norm=("softmax", op))
    b = sol_bounds(g, H100)
    eager = 4 * rows * cols * 2  # read x once, write y once
    assert b.unfused.bytes == eager and len(b.per_op) == 1
    assert b.unfused_kernel.bytes == g.bytes_unfused > eager
    assert b.unfused.time_s == pytest.approx(max(eager / BW, b.per_op[0].compute_s))
    assert b.fused.time_s <= b.unfused_graph.time_s <= b.unfused.time_s <= b.unfused_kernel.time_s


def test_an_op_output_read_by_another_op_is_written():
    n = 64
    p = program(
        [kernel("a", [("i", n)], "t[i]", "=", "x[i] * 2.0"),
         kernel("b", [("i", n)], "u[i]", "=", "t[i] + 1.0"),
         kernel("c", [("i", n)], "y[i]", "=", "t[i] * u[i]")],
        [tensor("x", (n,), "input"), tensor("t", (n,)), tensor("u", (n,)), tensor("y", (n,), "output")])
    g = tag(build_einsum_graph(p), a=("op1", "aten.mul.Tensor"), b=("op1", "aten.mul.Tensor"),
            c=("op2", "aten.mul.Tensor"))
    b = sol_bounds(g, H100)
    groups = {o.name: o.bytes for o in b.per_op}
    # op1 reads x, writes t and u (both read by op2); op2 reads t, u and writes y
    assert groups == {"op:op1": 3 * 4 * n, "op:op2": 3 * 4 * n}


def test_report_row_names_policy_and_peaks():
    from solar_assets.report.rows import peak_fields

    g = build_einsum_graph(conv2d(1, 4, 8, 8, 4, 3, 3, 1, 0))
    fields = peak_fields(sol_bounds(g, H100))
    assert fields["fp32_math"].startswith("auto (") and fields["compute_unit"] == "matrix"
    assert fields["peaks_unfused"] == f"matrix.tf32 {TF32:.4g} FLOP/s x 1 node"
    assert fields["bytes_unfused_kernel"] == g.bytes_unfused
