"""The cache-aware bound in the report: every row carries it, its failures leave the other modes
standing, a too-small buffer is flagged tiling-bound, and each workload gets its ski-slope files."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ir_schemas import ReportRow
from solar_assets import pipeline
from solar_assets.bounds.cache_aware import TILING_BOUND, CacheAwareOutcome, cache_aware_outcome
from solar_assets.graph import build_einsum_graph
from solar_assets.report import add_cache_aware, format_table, write_report
from ir_programs import gemm

MLP = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(64, 256)
        self.down = nn.Linear(256, 64)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
'''
HARDWARE = ("H100_SXM", "A6000", "Jetson_AGX_Thor")


@pytest.fixture(scope="module")
def mlp_result(tmp_path_factory) -> tuple[pipeline.WorkloadResult, Path]:
    root = tmp_path_factory.mktemp("ca")
    path = root / "tiny_mlp.py"
    path.write_text(MLP)
    result = pipeline.analyze_workload(path, HARDWARE, cache_dir=root / "cache", ski_slope_dir=root / "skislope")
    assert result.ok, result.error
    return result, root


def test_every_row_has_a_cache_aware_bound_between_fused_and_unfused_tiled(mlp_result):
    """(The ILP's own segment choices are tested below and in test_cache_aware.py.)"""
    result, _ = mlp_result
    assert [r.hardware for r in result.rows] == list(HARDWARE)
    for row in result.rows:
        assert row.onchip_buffer_bytes and row.cache_aware_proven_optimal is True
        assert row.bytes_fused <= row.bytes_cache_aware <= row.bytes_unfused_tiled
        assert row.sol_fused_s <= row.sol_cache_aware_s
        assert row.bound_cache_aware in ("compute", "memory")
        # every tensor of the MLP fits every shipped buffer at once: the fused traffic is the optimum
        assert row.bytes_cache_aware == row.bytes_fused < row.bytes_unfused == row.bytes_unfused_tiled
    assert "cache_aware" in result.seconds


def test_ski_slope_files_are_written_per_workload(mlp_result):
    _, root = mlp_result
    rows = list(csv.DictReader((root / "skislope" / "tiny_mlp.csv").open()))
    caps = [int(r["capacity_bytes"]) for r in rows]
    assert caps[0] == 64 << 10 and caps[-1] == 1 << 30 and caps == sorted(caps)
    traffic = [int(r["bytes_cache_aware"]) for r in rows]
    assert all(a >= b for a, b in zip(traffic, traffic[1:]))  # more buffer never costs traffic
    assert (root / "skislope" / "tiny_mlp.png").read_bytes()[:4] == b"\x89PNG"


def test_a_second_run_reuses_the_cached_solves(mlp_result, monkeypatch):
    result, root = mlp_result

    def no_solver(*args, **kwargs):
        raise AssertionError("the solver ran although the outcome was cached")

    monkeypatch.setattr("solar_assets.bounds.cache_aware.cache_aware_outcome", no_solver)
    monkeypatch.setattr("solar_assets.bounds.cache_aware.ski_slope", no_solver)
    again = pipeline.analyze_workload(root / "tiny_mlp.py", HARDWARE, cache_dir=root / "cache",
                                      ski_slope_dir=root / "skislope")
    assert again.ok, again.error
    assert [r.bytes_cache_aware for r in again.rows] == [r.bytes_cache_aware for r in result.rows]


def test_a_solver_failure_leaves_the_other_modes_and_says_why(mlp_result, monkeypatch, tmp_path):
    result, root = mlp_result
    failed = CacheAwareOutcome(capacity_bytes=1 << 20, error="glpsol not found; the unfused and fused bounds "
                                                             "are unaffected")
    monkeypatch.setattr("solar_assets.bounds.cache_aware.cache_aware_outcome", lambda graph, capacity, **options: failed)
    again = pipeline.analyze_workload(root / "tiny_mlp.py", ["H100_SXM"], cache_dir=tmp_path / "fresh")
    assert again.ok, again.error
    row = again.rows[0]
    assert row.bytes_cache_aware is None and row.sol_cache_aware_s is None and row.bound_cache_aware is None
    assert "no achievable cache-aware figure: glpsol not found" in row.cache_aware_note
    assert row.sol_fused_s == result.rows[0].sol_fused_s and row.sol_unfused_s == result.rows[0].sol_unfused_s
    table = format_table([row])
    assert "–" in table  # shown as absent, never as zero
    paths = write_report([row], tmp_path / "reports")
    assert "glpsol not found" in paths["markdown"].read_text()


def test_real_missing_glpsol_becomes_an_outcome_error():
    graph = build_einsum_graph(gemm(64, 64, 64))  # 48 KiB of tensors: a 16 KiB buffer needs the ILP
    outcome = cache_aware_outcome(graph, 16 << 10, glpsol="/nonexistent/glpsol")
    assert not outcome.ok and "glpsol" in outcome.error and "unaffected" in outcome.error
    assert outcome.note().startswith("no achievable cache-aware figure:")


def test_a_buffer_too_small_for_compulsory_traffic_is_flagged_tiling_bound():
    graph = build_einsum_graph(gemm(512, 512, 512))  # 1 MiB per float32 operand
    outcome = cache_aware_outcome(graph, 64 << 10)
    assert outcome.ok and outcome.tiling_bound
    assert outcome.bytes > outcome.unfused_bytes == graph.bytes_unfused
    assert outcome.note().startswith(TILING_BOUND)
    assert outcome.ordering_faults() == []
    roomy = cache_aware_outcome(graph, 64 << 20)
    assert roomy.bytes == graph.io_bytes and not roomy.tiling_bound
    row = ReportRow.model_validate({**_row_fields(graph), "onchip_buffer_bytes": 64 << 10})
    tight = add_cache_aware(row, outcome)
    assert tight.sol_cache_aware_s > tight.sol_unfused_s  # tiling, not fusion, is the bottleneck here
    assert "*" in format_table([tight])


def _row_fields(graph) -> dict:
    peak, beta = 1e15, 1e11  # memory-bound, so the traffic decides
    return dict(workload="gemm", source="gemm.py", hardware="toy", dtype="float32", translator="tracer",
                validated=True, max_abs_error=0.0, max_rel_error=0.0, macs=graph.macs, flops=graph.flops,
                bytes_unfused=graph.bytes_unfused, bytes_fused=graph.io_bytes,
                sol_unfused_s=max(graph.flops / peak, graph.bytes_unfused / beta),
                sol_fused_s=max(graph.flops / peak, graph.io_bytes / beta), bound_unfused="memory",
                bound_fused="memory", sol_unfused_graph_s=graph.bytes_unfused / beta,
                intensity_unfused_flop_per_byte=1.0, intensity_fused_flop_per_byte=1.0, peak_flop_per_s=peak,
                dram_bytes_per_s=beta, einsums=1)
