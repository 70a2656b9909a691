"""bench/gpu_headroom.py: its stated sample, the round-robin order, the measure phase on the CPU
(through the runner, PyTorch only) and the per-level report (geometric means computed by hand)."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import textwrap
from pathlib import Path

import pytest

from ir_schemas import ReportRow

REPO = Path(__file__).resolve().parents[1]
KB = Path(os.environ.get("KERNELBENCH_DIR", "/work/kb/KernelBench"))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gpu_headroom_bench", REPO / "bench" / "gpu_headroom.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sample_is_at_least_20_distinct_problems_per_level(bench):
    assert sorted(bench.SAMPLE) == [1, 2, 3]
    for level, stems in bench.SAMPLE.items():
        assert len(stems) >= 20 and len(set(stems)) == len(stems), level
    assert len(bench.LEVEL_OF) == sum(map(len, bench.SAMPLE.values()))  # no stem in two levels


@pytest.mark.skipif(not (KB / "level1").is_dir(), reason="KernelBench not extracted (set KERNELBENCH_DIR)")
def test_the_sample_files_exist_and_follow_the_selection_rule(bench):
    files = bench.sample_files(KB, [1, 2, 3])
    assert [len(v) for v in files.values()] == [len(bench.SAMPLE[n]) for n in (1, 2, 3)]
    for path in (f for fs in files.values() for f in fs):
        assert not bench.RECURRENT.search(path.read_text())
    e = bench.estimate(KB / "level1" / "12_Matmul_with_diagonal_matrices_.py")  # the level's smallest estimate
    assert e["bytes"] <= bench.MAX_BYTES and e["est_s"] == max(e["flops"] / bench.PEAK_FP32_FLOP_PER_S,
                                                               e["bytes"] / bench.DRAM_BYTES_PER_S)


def test_round_robin_interleaves_the_levels(bench):
    per_level = {1: [Path("a1"), Path("a2"), Path("a3")], 2: [Path("b1")], 3: [Path("c1"), Path("c2")]}
    assert [p.name for p in bench.round_robin(per_level)] == ["a1", "b1", "c1", "a2", "c2", "a3"]


TINY = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        """Scale then tanh."""

        def __init__(self, scale):
            super().__init__()
            self.scale = scale

        def forward(self, x):
            return torch.tanh(x * self.scale)


    batch_size = 8
    dim = 64


    def get_inputs():
        return [torch.randn(batch_size, dim)]


    def get_init_inputs():
        return [{scale}]
''')


def row(workload: str, sol_fused_s: float, level: int) -> dict:
    return ReportRow(
        workload=workload, source=f"/kb/level{level}/{workload}.py", hardware="host", dtype="float32",
        translator="tracer", validated=True, max_abs_error=0.0, max_rel_error=0.0, macs=0, flops=1024,
        bytes_unfused=4096, bytes_fused=4096, sol_unfused_s=2 * sol_fused_s, sol_fused_s=sol_fused_s,
        bound_unfused="memory", bound_fused="memory", sol_unfused_graph_s=2 * sol_fused_s,
        intensity_unfused_flop_per_byte=0.25, intensity_fused_flop_per_byte=0.25, peak_flop_per_s=1e11,
        dram_bytes_per_s=1e10, einsums=2).model_dump()


def test_measure_on_cpu_then_report_per_level(bench, tmp_path, monkeypatch, capsys):
    kit = tmp_path / "kit"
    for level, stem in ((1, "tiny_a"), (1, "tiny_b"), (2, "tiny_c")):
        (kit / f"level{level}").mkdir(parents=True, exist_ok=True)
        (kit / f"level{level}" / f"{stem}.py").write_text(TINY.format(scale=level + 1))
    monkeypatch.setattr(bench, "SAMPLE", {1: ("tiny_a", "tiny_b", "tiny_unbounded"), 2: ("tiny_c",), 3: ()})
    monkeypatch.setattr(bench, "LEVEL_OF", {"tiny_a": 1, "tiny_b": 1, "tiny_c": 2})
    bounds = tmp_path / "bounds.json"
    bounds.write_text(json.dumps({"schema": bench.BOUNDS_SCHEMA, "rows": [row("tiny_a", 1e-6, 1),
                                                                           row("tiny_b", 2e-6, 1),
                                                                           row("tiny_c", 4e-6, 2)]}))
    meas = tmp_path / "meas.json"
    assert bench.main(["measure", "--bounds", str(bounds), "--kb", str(kit), "--out", str(meas), "--device", "cpu",
                       "--backends", "torch_eager", "--runs", "3", "--warmup", "1", "--flush-bytes", str(1 << 20)]) == 0
    doc = json.loads(meas.read_text())
    assert [w["workload"] for w in doc["workloads"]] == ["tiny_a", "tiny_c", "tiny_b"]  # round-robin by level
    medians = {w["workload"]: w["timings"][0]["median_s"] for w in doc["workloads"]}
    capsys.readouterr()
    assert bench.main(["report", str(bounds), str(meas), "--csv", str(tmp_path / "h.csv")]) == 0
    text = capsys.readouterr().out
    level1 = [line for line in text.splitlines() if line.startswith("1 ") and "torch eager" in line]
    fused = [medians["tiny_a"] / 1e-6, medians["tiny_b"] / 2e-6]  # measured median / fused bound
    expected = math.sqrt(fused[0] * fused[1])
    assert len(level1) == 1 and f"{expected:.3g}× [{min(fused):.3g}–{max(fused):.3g}]" in level1[0]
    unfused = [f / 2 for f in fused]  # the unfused bounds are twice the fused ones
    assert f"{math.sqrt(unfused[0] * unfused[1]):.3g}×" in level1[0]
    assert "0 violation(s) of a true lower bound." in text
    lines = (tmp_path / "h.csv").read_text().splitlines()
    assert lines[0].startswith("level,workload") and len(lines) == 4


BLOCKER = textwrap.dedent('''\
    import importlib.abc, json, runpy, sys
    BLOCKED = {"dagster", "pyomo", "pydantic", "pandas", "networkx", "ir_schemas", "solar_assets", "solar"}
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError("blocked by the isolation test: " + name)
            return None
    sys.meta_path.insert(0, Block())
    sys.argv = ["gpu_headroom.py", *sys.argv[1:]]
    code = 0
    try:
        runpy.run_path("gpu_headroom.py", run_name="__main__")
    except SystemExit as e:
        code = e.code
    print("LEAKED=" + json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)))
    sys.exit(code)
''')


def test_the_measure_phase_runs_from_a_kit_with_only_torch(bench, tmp_path):
    """What the GPU box runs: the kit's gpu_headroom.py loads the kit's gpu_runner.py, nothing of solar."""
    import shutil
    import subprocess
    import sys

    kit = tmp_path / "kit"
    (kit / "level1").mkdir(parents=True)
    shutil.copy(REPO / "bench" / "gpu_headroom.py", kit / "gpu_headroom.py")
    shutil.copy(REPO / "solar_assets" / "measure" / "gpu_runner.py", kit / "gpu_runner.py")
    stem = bench.SAMPLE[1][0]  # a sample name, our own tiny file under it
    (kit / "level1" / f"{stem}.py").write_text(TINY.format(scale=2))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", BLOCKER, "measure", "--kb", ".", "--levels", "1", "--out",
                           "meas.json", "--device", "cpu", "--backends", "torch_eager", "--runs", "2", "--warmup", "1",
                           "--flush-bytes", str(1 << 20)], cwd=kit, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.split("LEAKED=")[1]) == []
    doc = json.loads((kit / "meas.json").read_text())
    assert [w["workload"] for w in doc["workloads"]] == [stem] and doc["workloads"][0]["timings"][0]["runs"] == 2
