"""The stand-alone GPU runner on the CPU, its isolation from the stack, and its join with bounds.

The runner (solar_assets/measure/gpu_runner.py) must run on a machine with only PyTorch, so one
test runs it in a fresh interpreter in which dagster, pyomo, pydantic, pandas, networkx,
ir_schemas and every other solar module cannot be imported. The join figures are hand-computed
from hand-made bounds and timings. GPU-only tests are skipped where torch sees no CUDA device.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from ir_schemas import ReportRow
from solar_assets.measure import gpu_runner
from solar_assets.measure.join import JoinError, join, join_files, load_bounds, load_measurements

REPO = Path(__file__).resolve().parents[1]
RUNNER = REPO / "solar_assets" / "measure" / "gpu_runner.py"
FLUSH = 1 << 20  # a small flush buffer: the tests time the loop, not this host's caches

MATMUL_RELU = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        """A matrix multiplication followed by a ReLU."""

        def __init__(self):
            super().__init__()

        def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
            return torch.relu(torch.matmul(A, B))


    m = 16
    k = 32
    n = 8


    def get_inputs():
        return [torch.randn(m, k), torch.randn(k, n)]


    def get_init_inputs():
        return []
''')
LINEAR_F64 = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        """A float64 linear layer: the runner keeps the file's dtype."""

        def __init__(self, in_features, out_features):
            super().__init__()
            self.fc = nn.Linear(in_features, out_features, dtype=torch.float64)

        def forward(self, x):
            return self.fc(x)


    batch_size = 4
    in_features = 12
    out_features = 6


    def get_inputs():
        return [torch.randn(batch_size, in_features, dtype=torch.float64)]


    def get_init_inputs():
        return [in_features, out_features]
''')
BLOCKED = ("dagster", "pyomo", "pydantic", "pandas", "networkx", "ir_schemas", "great_expectations", "langchain",
           "numba", "solar")


@pytest.fixture
def workload(tmp_path: Path) -> Path:
    path = tmp_path / "matmul_relu.py"
    path.write_text(MATMUL_RELU)
    return path


def fast(**changes) -> gpu_runner.Options:
    return gpu_runner.Options(**{"runs": 5, "warmup": 1, "min_runs": 1, "flush_bytes": FLUSH, **changes})


# ---------------------------------------------------------------------------- the runner on the CPU
def test_runner_on_cpu_writes_a_measurement_file(workload, tmp_path):
    f64 = tmp_path / "linear_f64.py"
    f64.write_text(LINEAR_F64)
    out = tmp_path / "meas.json"
    doc = gpu_runner.measure([workload, f64], "cpu", ["torch_eager"], fast(), out)
    assert json.loads(out.read_text()) == doc
    assert doc["schema"] == "solar.gpu_measurement.v1" and doc["created"].endswith("Z")
    assert doc["device"]["kind"] == "cpu" and doc["device"]["hardware"] == "host"
    assert doc["software"]["torch"] == torch.__version__
    assert doc["runner"]["flush_bytes"] == FLUSH and doc["runner"]["runs"] == 5
    assert doc["settings"]["matmul_allow_tf32"] == torch.backends.cuda.matmul.allow_tf32
    first, second = doc["workloads"]
    assert (first["workload"], first["framework"], first["dtypes"]) == ("matmul_relu", "torch", ["float32"])
    assert second["dtypes"] == ["float64"]  # as the file says: nothing cast
    (t,) = first["timings"]
    times = t["times_s"]
    assert (t["backend"], t["status"], t["runs"], len(times), t["timer"]) == ("torch_eager", "ok", 5, 5,
                                                                              "perf_counter")
    assert all(x > 0 for x in times)
    assert t["median_s"] == statistics.median(times) and t["min_s"] == min(times)
    ordered = sorted(times)  # 5 runs: p10 is 40 % of the way from the 1st to the 2nd, p90 of the 4th to the 5th
    assert t["p10_s"] == pytest.approx(ordered[0] + 0.4 * (ordered[1] - ordered[0]))
    assert t["p90_s"] == pytest.approx(ordered[3] + 0.6 * (ordered[4] - ordered[3]))


@pytest.mark.slow
def test_runner_writes_a_per_op_trace_that_solar_headroom_joins(workload, tmp_path, monkeypatch, capsys):
    """--per-op-traces: the eager run under torch.profiler, iterations annotated as
    ``op_profile`` splits them; the trace joins with the file's per-op SOL."""
    from solar_assets.cli import main
    from solar_assets.measure.op_profile import ITERATION, profile_of, read_trace

    assert gpu_runner.ITERATION == ITERATION  # the runner is standalone: one name, kept equal here
    doc = gpu_runner.measure([workload], "cpu", ["torch_eager"], fast(per_op_dir=tmp_path / "traces",
                                                                      per_op_iterations=4), tmp_path / "m.json")
    trace = Path(doc["workloads"][0]["per_op_trace"])
    assert trace == tmp_path / "traces" / "matmul_relu.json" and doc["runner"]["per_op_dir"] == str(trace.parent)
    profile = profile_of(read_trace(trace))
    assert len(profile.iterations) == 4 and not profile.device
    assert [c.name for c in profile.iterations[0]] == ["aten::matmul", "aten::relu"]
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))
    assert main(["headroom", "--profile", str(trace), str(workload), "--hardware", "H100_SXM", "--json"]) == 0
    joined = json.loads(capsys.readouterr().out)
    assert {r["call"] for r in joined["rows"]} == {"matmul#1", "relu#1"} and joined["not_attributed"] == []


TANH_JAX = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp

    batch_size = 8
    dim = 32


    def get_inputs():
        return [jax.random.normal(jax.random.key(0), (batch_size, dim))]


    def forward(x):
        return jnp.tanh(x) * 2.0
''')


def test_runner_times_a_jax_workload_under_jit(tmp_path):
    pytest.importorskip("jax")
    path = tmp_path / "tanh_jax.py"
    path.write_text(TANH_JAX)
    doc = gpu_runner.measure([path], "cpu", ["torch_eager", "jax_jit"], fast())
    (record,) = doc["workloads"]
    assert record["framework"] == "jax" and record["dtypes"] == ["float32"]
    (t,) = record["timings"]  # torch_eager does not apply to a JAX file
    assert (t["backend"], t["status"], t["runs"], t["timer"]) == ("jax_jit", "ok", 5, "perf_counter_blocking_call")


def test_quantiles_match_numpy():
    import numpy as np

    values = [0.3, 0.1, 0.7, 0.2, 0.9, 0.4, 0.15]
    for q in (0.1, 0.5, 0.9):
        assert gpu_runner.quantile(values, q) == pytest.approx(float(np.percentile(values, q * 100)))


def test_a_bad_file_and_a_deadline_are_recorded_not_raised(workload, tmp_path):
    bad = tmp_path / "no_model.py"
    bad.write_text("import torch\n\ndef get_inputs():\n    return [torch.ones(2)]\n")
    doc = gpu_runner.measure([bad, workload], "cpu", ["torch_eager", "torch_compile"], fast(deadline_s=0.0))
    bad_record, good = doc["workloads"]
    # a deadline of 0 s: every pair is skipped, named; the file is never loaded, so no error yet
    assert [t["status"] for t in good["timings"]] == ["skipped", "skipped"]
    assert all(t["reason"].startswith("deadline") for t in good["timings"])
    doc = gpu_runner.measure([bad, workload], "cpu", ["torch_eager"], fast())
    bad_record, good = doc["workloads"]
    assert "missing Model, get_init_inputs" in bad_record["error"] and str(bad) in bad_record["error"]
    assert bad_record["timings"][0]["status"] == "failed"
    assert good["timings"][0]["status"] == "ok"  # the bad file did not stop the good one


@pytest.mark.slow
def test_a_compile_past_its_budget_is_skipped_with_the_reason(workload):
    # a 1 ms budget: torch.compile cannot trace, let alone compile, in that time
    doc = gpu_runner.measure([workload], "cpu", ["torch_compile"], fast(backend_budget_s=0.001))
    (t,) = doc["workloads"][0]["timings"]
    assert t["status"] == "skipped" and "budget of 0.001 s" in t["reason"] and not t["times_s"]


def test_cpu_cache_size_is_read_from_sysfs(tmp_path):
    # two cores sharing one L2 and one L3; each core its own L1d; an instruction cache is not counted
    for cpu, l1 in ((0, "32K"), (1, "32K")):
        for index, (level, kind, size, shared) in enumerate(
                ((1, "Data", l1, str(cpu)), (1, "Instruction", "32K", str(cpu)), (2, "Unified", "1024K", "0-1"),
                 (3, "Unified", "16M", "0-1"))):
            d = tmp_path / f"cpu{cpu}" / "cache" / f"index{index}"
            d.mkdir(parents=True)
            for name, value in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
                (d / name).write_text(f"{value}\n")
    assert gpu_runner.cpu_cache_bytes(tmp_path) == 2 * 32 * 2**10 + 2**20 + 16 * 2**20


def test_hardware_is_guessed_from_the_gpu_name():
    assert gpu_runner.guess_hardware("NVIDIA H200") == "H200"
    assert gpu_runner.guess_hardware("NVIDIA H100 80GB HBM3") == "H100_SXM"
    assert gpu_runner.guess_hardware("NVIDIA H100 PCIe") == "H100_PCIe"
    assert gpu_runner.guess_hardware("NVIDIA GeForce RTX 4090") is None


ISOLATED = textwrap.dedent('''\
    import importlib.abc, json, runpy, sys
    BLOCKED = set({blocked!r})
    ALLOWED = {{"solar_assets", "solar_assets.version", "solar_assets.measure", "solar_assets.measure.gpu_runner"}}
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            top = name.split(".")[0]
            if top in BLOCKED or (top == "solar_assets" and name not in ALLOWED):
                raise ImportError("blocked by the isolation test: " + name)
            return None
    sys.meta_path.insert(0, Block())
    sys.argv = ["gpu_runner", *{argv!r}]
    code = 0
    try:
        {run}
    except SystemExit as e:
        code = e.code
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED or
                    (m.split(".")[0] == "solar_assets" and m not in ALLOWED))
    print("LEAKED=" + json.dumps(leaked))
    sys.exit(code)
''')


@pytest.mark.parametrize("how", ["copied alone", "python -m"])
def test_runner_needs_only_torch(workload, tmp_path, how):
    out = tmp_path / "meas.json"
    argv = ["--out", str(out), "--device", "cpu", "--backends", "torch_eager", "--runs", "3", "--warmup", "1",
            "--flush-bytes", str(FLUSH), str(workload)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if how == "copied alone":
        alone = tmp_path / "box" / "gpu_runner.py"
        alone.parent.mkdir()
        shutil.copy(RUNNER, alone)
        run = f"runpy.run_path({str(alone)!r}, run_name='__main__')"
        cwd = alone.parent
    else:
        run = "runpy.run_module('solar_assets.measure.gpu_runner', run_name='__main__', alter_sys=True)"
        env["PYTHONPATH"] = str(REPO)
        cwd = tmp_path
    script = ISOLATED.format(blocked=BLOCKED, argv=argv, run=run)
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    leaked = json.loads(done.stdout.split("LEAKED=")[1])
    assert leaked == []
    doc = json.loads(out.read_text())
    assert doc["workloads"][0]["timings"][0]["status"] == "ok" and doc["workloads"][0]["timings"][0]["runs"] == 3


# ---------------------------------------------------------------------------- the join, by hand
def bounds_row(workload: str = "matmul_relu", hardware: str = "H200", **changes) -> dict:
    base = dict(
        workload=workload, source=f"/kb/level1/{workload}.py", hardware=hardware, dtype="float32",
        translator="tracer", validated=True, max_abs_error=0.0, max_rel_error=0.0, macs=4096, flops=8320,
        bytes_unfused=4 * 2**20, bytes_fused=2**20, sol_unfused_s=4e-3, sol_fused_s=1e-3, bound_unfused="memory",
        bound_fused="memory", sol_unfused_graph_s=3e-3, intensity_unfused_flop_per_byte=0.01,
        intensity_fused_flop_per_byte=0.02, peak_flop_per_s=6.7e13, dram_bytes_per_s=4.8e12, einsums=2,
        onchip_buffer_bytes=50 * 2**20, sol_cache_aware_s=2e-3, sol_cache_aware_lb_s=1.5e-3)
    return ReportRow(**{**base, **changes}).model_dump()


def timing(backend: str, times: list[float], status: str = "ok", reason: str = "") -> dict:
    t = {"backend": backend, "label": gpu_runner.LABELS[backend], "status": status, "reason": reason,
         "times_s": times}
    if times:
        t.update(median_s=statistics.median(times), p10_s=min(times), p90_s=max(times), min_s=min(times))
    return t


def measurement(workloads: list[dict], hardware: str | None = "H200") -> dict:
    return {"schema": "solar.gpu_measurement.v1", "device": {"kind": "cuda", "name": "NVIDIA H200",
                                                              "hardware": hardware}, "workloads": workloads}


def hand_made() -> tuple[list[ReportRow], dict]:
    rows = [ReportRow(**bounds_row()),
            ReportRow(**bounds_row(hardware="H100_SXM", sol_fused_s=5.0)),  # another GPU: never joined
            ReportRow(**bounds_row("softmax"))]  # bounded, not measured
    meas = measurement([
        {"workload": "matmul_relu", "path": "kit/level1/matmul_relu.py", "timings": [
            timing("torch_eager", [3e-3, 5e-3, 4e-3, 6e-3, 2e-3]),
            # fastest 1.2 ms: above fused (1 ms), below the cache-aware lower bound (1.5 ms)
            timing("torch_compile", [1.3e-3, 1.2e-3, 1.4e-3]),
            timing("torch_compile_max_autotune", [], "skipped", "torch.compile max-autotune passed its budget")]},
        {"workload": "not_bounded", "path": "kit/level1/not_bounded.py", "timings": [timing("torch_eager", [1.0])]},
    ])
    return rows, meas


def test_join_headroom_per_mode_by_hand():
    rows, meas = hand_made()
    result = join(rows, meas)
    eager, compiled = result.rows
    assert (eager.backend, eager.median_s, eager.min_s, eager.runs) == ("torch_eager", 4e-3, 2e-3, 5)
    # median 4 ms over unfused 4 ms, fused 1 ms, modelled cache-aware 2 ms, cache-aware lower bound 1.5 ms
    assert eager.headroom_unfused == pytest.approx(1.0)
    assert eager.headroom_fused == pytest.approx(4.0)
    assert eager.headroom_cache_aware == pytest.approx(2.0)
    assert eager.headroom_cache_aware_lb == pytest.approx(4 / 1.5)
    assert not eager.violation  # 2 ms is above both provable bounds (1 ms, 1.5 ms)
    # below unfused (4 ms) and its whole-graph form (3 ms): explained, not violations
    assert sum(c.startswith("explained") for c in eager.audit) == 2
    assert result.hardware == "H200" and eager.sol_fused_s == 1e-3  # the H200 row, not the H100 one
    assert result.notes == []  # the device states no L2 size
    meas["device"]["l2_bytes"] = 60 * 2**20  # more than the row's 50 MiB buffer: said, not hidden
    assert join(rows, meas).notes == ["the measured device reports 60 MiB of L2, more than the spec's on-chip "
                                      "buffer of 50 MiB: its cache-aware figures assume less on-chip storage "
                                      "than the chip has"]


def test_join_lists_a_violation_with_both_figures_unclamped():
    rows, meas = hand_made()
    result = join(rows, meas)
    compiled = result.rows[1]
    assert compiled.violation and result.violations == [compiled]
    (clause,) = [c for c in compiled.audit if c.startswith("VIOLATION")]
    assert "1.2 ms" in clause and "1.5 ms" in clause and "0.8×" in clause  # 1.2 / 1.5
    assert "fused bound" not in clause  # 1.2 ms ≥ the fused 1 ms: that bound holds
    assert compiled.headroom_cache_aware_lb == pytest.approx(1.3 / 1.5)  # below 1, never clamped to 1
    assert compiled.headroom_fused == pytest.approx(1.3)
    assert any("max-autotune" in s and "budget" in s for s in result.skipped)
    assert result.unmatched == ["kit/level1/not_bounded.py: no bounds row for 'not_bounded' on H200"]
    assert result.unmeasured == ["softmax (/kb/level1/softmax.py)"]


def test_join_picks_the_row_whose_path_matches_and_needs_a_hardware():
    rows = [ReportRow(**bounds_row(source="/kb/level1/x/matmul_relu.py", sol_fused_s=1e-3)),
            ReportRow(**bounds_row(source="/kb/level2/x/matmul_relu.py", sol_fused_s=2e-3))]
    meas = measurement([{"workload": "matmul_relu", "path": "/box/level2/x/matmul_relu.py",
                         "timings": [timing("torch_eager", [4e-3])]}])
    assert join(rows, meas).rows[0].headroom_fused == pytest.approx(2.0)  # 4 ms / the level-2 row's 2 ms
    with pytest.raises(JoinError, match="--hardware"):
        join(rows, measurement(meas["workloads"], hardware=None))
    with pytest.raises(JoinError, match="no row on B200"):
        join(rows, meas, hardware="B200")


@pytest.mark.parametrize("form", ["list", "document", "report.json"])
def test_bounds_file_forms(tmp_path, form):
    rows = [bounds_row(), bounds_row("softmax")]
    if form == "list":
        data: object = rows
    elif form == "document":
        data = {"schema_version": "1", "rows": rows, "failures": []}
    else:
        from ir_schemas.report_document import ReportDocument

        data = json.loads(ReportDocument(solar_version="0", created="2026-12-01T00:00:00Z", rows=rows)
                          .model_dump_json(by_alias=True))
    path = tmp_path / "bounds.json"
    path.write_text(json.dumps(data))
    assert [r.workload for r in load_bounds(path)] == ["matmul_relu", "softmax"]


def test_unreadable_files_are_one_line_errors(tmp_path):
    bad = tmp_path / "bounds.json"
    bad.write_text('{"rows": 3}')
    with pytest.raises(JoinError, match="not a bounds file"):
        load_bounds(bad)
    bad.write_text("[{")
    with pytest.raises(JoinError, match="bounds.json: the bounds file is not JSON"):
        load_bounds(bad)
    bad.write_text('{"schema": "other"}')
    with pytest.raises(JoinError, match="not a measurement file"):
        load_measurements(bad)


def test_solar_headroom_command(tmp_path, capsys):
    from solar_assets.cli import main

    rows, meas = hand_made()
    bounds, measured, csv_path = tmp_path / "bounds.json", tmp_path / "meas.json", tmp_path / "h.csv"
    bounds.write_text(json.dumps([r.model_dump() for r in rows]))
    measured.write_text(json.dumps(meas))
    assert main(["headroom", "--bounds", str(bounds), "--measurements", str(measured), "--json",
                 "--csv", str(csv_path)]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["violations"] == 1 and [r["backend"] for r in doc["rows"]] == ["torch_eager", "torch_compile"]
    assert "VIOLATION" in captured.err  # warned on stderr too
    assert len(csv_path.read_text().splitlines()) == 3
    assert main(["headroom", "--bounds", str(bounds), "--measurements", str(measured)]) == 0
    table = capsys.readouterr().out
    assert "1 violation(s) of a true lower bound:" in table and "4×" in table
    assert main(["headroom", "--bounds", str(tmp_path / "missing.json"), "--measurements", str(measured)]) == 2
    assert "missing.json: cannot read the bounds file" in capsys.readouterr().err


# ---------------------------------------------------------------------------- end to end on the CPU
@pytest.mark.slow
def test_bounds_file_to_measurement_to_headroom_on_cpu(workload, tmp_path, monkeypatch, capsys):
    """A real ``solar analyze --json --no-dagster --hardware host`` bounds file, the runner on the
    CPU, then the join: the fused headroom is the measured median over the row's own fused bound."""
    from solar_assets.cli import main

    home = tmp_path / "home"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    assert main(["analyze", str(workload), "--json", "--no-dagster", "--no-progress", "--hardware", "host",
                 "--output", str(tmp_path / "report")]) == 0
    bounds = tmp_path / "bounds.json"
    bounds.write_text(capsys.readouterr().out)
    (row,) = load_bounds(bounds)
    assert row.macs == 16 * 32 * 8  # m·k·n
    measured = tmp_path / "meas.json"
    assert gpu_runner.main(["--bounds", str(bounds), "--out", str(measured), "--device", "cpu", "--backends",
                            "torch_eager", "--runs", "5", "--warmup", "1", "--flush-bytes", str(FLUSH)]) == 0
    result = join_files(bounds, measured)
    (joined,) = result.rows
    median = json.loads(measured.read_text())["workloads"][0]["timings"][0]["median_s"]
    assert joined.hardware == "host" and joined.headroom_fused == pytest.approx(median / row.sol_fused_s)
    assert joined.violation is False  # a CPU run of a 16×32×8 matmul is far above its bound


# ---------------------------------------------------------------------------- GPU only
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_runner_on_a_gpu_uses_cuda_events_and_flushes_twice_the_l2(workload):
    doc = gpu_runner.measure([workload], "cuda", ["torch_eager"], gpu_runner.Options(runs=5, warmup=2, min_runs=1))
    device = doc["device"]
    assert device["kind"] == "cuda" and device["name"] == torch.cuda.get_device_name()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    assert doc["runner"]["flush_bytes"] >= 2 * l2
    (t,) = doc["workloads"][0]["timings"]
    assert t["status"] == "ok" and t["timer"] == "cuda_events" and t["runs"] == 5
