"""Roofline bounds and the inverse roofline, against numbers worked by hand."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest

from ir_schemas import Reshape
from solar_assets.bounds import BoundsError, SolBounds, inverse_roofline, sol_bounds
from solar_assets.graph import build_einsum_graph


from ir_programs import attention, gemm, kernel, program, tensor


@dataclass(frozen=True)
class Hardware:
    """A stand-in with the slice of HardwareSpec the bounds use."""

    name: str = "toy"
    peaks: dict[str, float] = field(default_factory=lambda: {"float32": 1e12, "bfloat16": 4e12})
    dram_bytes_per_s: float = 1e11

    def peak_for(self, dtype: str) -> float:
        return self.peaks[dtype]

    def digest(self) -> str:
        return "0123456789abcdef"


HW = Hardware()


def test_gemm_bounds_by_hand():
    M = N = K = 256
    g = build_einsum_graph(gemm(M, N, K))
    b = sol_bounds(g, HW)
    F, B = 2 * M * N * K, 4 * (M * K + K * N + M * N)
    assert (b.dtype, b.peak_flop_per_s, b.dram_bytes_per_s) == ("float32", 1e12, 1e11)
    assert b.hardware == "toy@0123456789ab"
    for bound in (b.unfused, b.unfused_graph, b.fused):  # one node: all three coincide
        assert (bound.flops, bound.bytes) == (F, B)
        assert bound.time_s == pytest.approx(max(F / 1e12, B / 1e11))
        assert bound.intensity_flop_per_byte == pytest.approx(F / B)
        assert bound.limiter == "compute" and bound.proven_optimal
    assert [nb.name for nb in b.per_node] == ["mm"]


def test_dtype_picks_the_peak():
    g = build_einsum_graph(gemm(512, 512, 512, dtype="bfloat16"))
    b = sol_bounds(g, HW)
    assert b.dtype == "bfloat16" and b.peak_flop_per_s == 4e12
    assert sol_bounds(g, HW, dtype="float32").peak_flop_per_s == 1e12


def test_limiter_flips_with_the_peak():
    g = build_einsum_graph(gemm(64, 64, 64))  # intensity 2*64^3 / (4*3*64^2) = 10.7 FLOP/B
    slow = sol_bounds(g, Hardware(peaks={"float32": 1e11}))   # ridge 1 FLOP/B
    fast = sol_bounds(g, Hardware(peaks={"float32": 1e13}))   # ridge 100 FLOP/B
    assert slow.fused.limiter == slow.unfused.limiter == "compute"
    assert fast.fused.limiter == fast.unfused.limiter == "memory"
    assert fast.fused.time_s == pytest.approx(g.io_bytes / 1e11)
    assert slow.fused.time_s == pytest.approx(g.flops / 1e11)


def test_fused_is_at_most_unfused_for_multi_node_programs():
    g = build_einsum_graph(attention(2, 4, 64, 16))
    assert len(g.nodes) == 6
    for hw in (HW, Hardware(peaks={"float32": 1e9}), Hardware(peaks={"float32": 1e15})):
        b = sol_bounds(g, hw)
        assert b.fused.bytes == g.io_bytes < b.unfused.bytes == b.unfused_graph.bytes == g.bytes_unfused
        assert b.fused.time_s <= b.unfused_graph.time_s <= b.unfused.time_s
        assert b.unfused.time_s == pytest.approx(sum(nb.time_s for nb in b.per_node))
        # each node at its own unit's peak (all float32 on this stand-in: hw.peaks["float32"]);
        # b.peak_flop_per_s is the program's effective peak, ΣF / busiest unit's time
        assert b.unfused.time_s == pytest.approx(
            sum(max(n.flops / hw.peaks["float32"], n.bytes / b.dram_bytes_per_s) for n in g.nodes))
        assert b.unfused_graph.time_s == pytest.approx(max(g.flops / b.peak_flop_per_s,
                                                           g.bytes_unfused / b.dram_bytes_per_s))


def test_unfused_limiter_compares_summed_demands():
    # a compute-heavy GEMM next to a memory-heavy elementwise pass
    M = 128
    p = program(
        [kernel("mm", [("m", M), ("n", M), ("k", M)], "C[m, n]", "+=", "A[m, k] * B[k, n]"),
         kernel("add", [("m", M), ("n", M)], "D[m, n]", "=", "C[m, n] + A[m, n]")],
        [tensor("A", (M, M), "input", pos=0), tensor("B", (M, M), "input", pos=1), tensor("C", (M, M)),
         tensor("D", (M, M), "output")])
    g = build_einsum_graph(p)
    b = sol_bounds(g, HW)
    limits = {nb.name: nb.limiter for nb in b.per_node}
    assert limits == {"mm": "compute", "add": "memory"}
    compute_s = g.flops / 1e12
    memory_s = g.bytes_unfused / 1e11
    assert b.unfused.limiter == ("compute" if compute_s > memory_s else "memory") == "compute"
    slow_memory = sol_bounds(g, Hardware(dram_bytes_per_s=1e9))
    assert slow_memory.unfused.limiter == "memory"


def test_inverse_roofline_round_trips():
    g = build_einsum_graph(attention(2, 4, 64, 16))
    T = 2e-6
    inv = inverse_roofline(g, HW, T)
    assert inv.target_latency_s == T and inv.hardware == "toy@0123456789ab"
    for mode in (inv.unfused_graph, inv.fused):
        assert mode.min_flop_per_s == pytest.approx(mode.flops / T)
        assert mode.min_bytes_per_s == pytest.approx(mode.bytes / T)
        assert max(mode.flops / mode.min_flop_per_s, mode.bytes / mode.min_bytes_per_s) == pytest.approx(T)
        # units run concurrently: the peaks must grow by (busiest unit's time) / T, where the
        # matrix unit does the two contractions' 2·MACs and the vector unit the softmax chain
        matrix_s = sum(2 * n.macs for n in g.nodes if n.macs) / 1e12
        vector_s = sum(n.flops for n in g.nodes if not n.macs) / 1e12
        assert mode.compute_factor == pytest.approx(max(matrix_s, vector_s) / T)
        assert mode.bandwidth_factor == pytest.approx(mode.min_bytes_per_s / 1e11)
    assert inv.fused.min_bytes_per_s < inv.unfused_graph.min_bytes_per_s


def test_inverse_roofline_at_the_bound_is_exactly_met():
    g = build_einsum_graph(attention(1, 2, 32, 8))
    b = sol_bounds(g, HW)
    for bound, name in ((b.fused, "fused"), (b.unfused_graph, "unfused_graph")):
        inv = inverse_roofline(b, bound.time_s)  # the (bounds, T) form of the call
        mode = getattr(inv, name)
        assert max(mode.compute_factor, mode.bandwidth_factor) == pytest.approx(1.0)
        faster = getattr(inverse_roofline(b, bound.time_s / 10), name)
        assert max(faster.compute_factor, faster.bandwidth_factor) == pytest.approx(10.0)
        assert not faster.meets_target


def test_nothing_is_clamped():
    g = build_einsum_graph(gemm(8, 8, 8))
    b = sol_bounds(g, HW)
    assert isinstance(b, SolBounds)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(BoundsError, match="target latency"):
            inverse_roofline(b, bad)
    with pytest.raises(BoundsError, match="peak FLOP/s"):
        sol_bounds(g, Hardware(peaks={"float32": 0.0}))
    with pytest.raises(TypeError):
        inverse_roofline(g, 1e-3)


def test_a_program_of_views_only_costs_nothing():
    p = program([Reshape(name="view", src="X", out="Y")], [tensor("X", (4, 4), "input"), tensor("Y", (16,), "output")])
    b = sol_bounds(build_einsum_graph(p), HW)
    assert (b.unfused.time_s, b.fused.time_s, b.fused.intensity_flop_per_byte) == (0.0, 0.0, 0.0)


def test_with_a_shipped_hardware_spec():
    hardware = pytest.importorskip("solar_assets.hardware")
    hw = hardware.load_hardware("H100_SXM")
    g = build_einsum_graph(gemm(1024, 1024, 1024))
    b = sol_bounds(g, hw)
    # no origin op: an fp32 contraction gets the TF32 tensor-core peak (the lower bound whichever
    # framework ran it); before per-node peaks this pinned the CUDA-core fp32 peak, 7.4x higher
    tf32 = hw.peak_flop_per_s.matrix["tf32"]
    assert b.peak_flop_per_s == tf32
    assert b.fused.limiter == "compute"  # ~171 FLOP/B against a ridge of 4.947e14 / 3.35e12 = 148
    assert b.fused.time_s == pytest.approx(2 * 1024**3 / tf32)
    ieee = sol_bounds(g, hw, fp32_math="ieee")
    assert ieee.fused.time_s == pytest.approx(2 * 1024**3 / hw.peak_for("float32"))
    assert b.hardware == f"H100_SXM@{hw.digest()}"
