"""Per-op measured headroom (issue 27): a profile of the eager run, the user's own torch.profiler
trace included, joined call by call with the per-op SOL, with the floor audit.

References: the profile is torch.profiler's own Chrome trace, the whole-run time is the
workload-level measurement (``measure_workload``), and the per-op SOL the per-op rows; a planted
violation is a real trace whose GEMM call's duration is cut to a nanosecond.
"""
from __future__ import annotations

import gzip
import json
import textwrap
from pathlib import Path

import pytest

from solar_assets.asset_compute.plain import analyze_workload
from solar_assets.chain.run import Kept
from solar_assets.cli import main
from solar_assets.measure import MeasureOptions, TimingOptions, measure_workload
from solar_assets.measure.op_join import align, floor_s, ir_calls, join_profile, with_measured_rows
from solar_assets.measure.op_measure import profile_workload
from solar_assets.measure.op_profile import ProfileError, ProfiledCall, profile_of, read_trace
from solar_assets.report.measured_ops import format_measured_ops
from solar_assets.report.per_op import op_key

MLP = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    batch_size = 512
    in_features = 1024
    hidden = 2048
    out_features = 512


    class Model(nn.Module):
        \"\"\"Two linear layers with a GELU between them.\"\"\"

        def __init__(self, in_features, hidden, out_features):
            super(Model, self).__init__()
            self.fc1 = nn.Linear(in_features, hidden)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(hidden, out_features)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc2(self.act(self.fc1(x)))


    def get_inputs():
        return [torch.randn(batch_size, in_features)]


    def get_init_inputs():
        return [in_features, hidden, out_features]
""")

CNN = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    batch_size = 8
    channels = 16
    height = 64
    width = 64


    class Model(nn.Module):
        def __init__(self, channels):
            super(Model, self).__init__()
            self.conv1 = nn.Conv2d(3, channels, kernel_size=3, padding=1)
            self.conv2 = nn.Conv2d(channels, 2 * channels, kernel_size=3, padding=1)

        def forward(self, x):
            x = F.max_pool2d(torch.relu(self.conv1(x)), 2)
            x = F.max_pool2d(torch.relu(self.conv2(x)), 2)
            return torch.flatten(x, 1).sum(dim=1)


    def get_inputs():
        return [torch.randn(batch_size, 3, height, width)]


    def get_init_inputs():
        return [channels]
""")

JAX_FN = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp

    N = 256


    def get_inputs():
        k1, k2 = jax.random.split(jax.random.key(0))
        return [jax.random.normal(k1, (N, N)), jax.random.normal(k2, (N, N))]


    def forward(x, w):
        return jnp.tanh(x @ w) + 1.0
""")


@pytest.fixture(scope="module")
def host_dir(tmp_path_factory):
    """A host spec measured on this machine as ``solar hardware detect`` writes it, its GEMM check
    included: a CPU that turbo-boosts past its nominal clock beats a peak taken from that clock,
    and a timed GEMM call then (rightly) violated its compute floor."""
    from solar_assets.hardware.detect import write_host_spec

    hardware = tmp_path_factory.mktemp("hardware")
    write_host_spec(hardware / "host.yaml", stream_array_bytes=64 * 2**20)
    return hardware


@pytest.fixture
def on_host(host_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(host_dir))
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))
    return host_dir


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _analysed(path: Path, hardware_dir: Path):
    keep = Kept()
    result = analyze_workload(path, ["host"], keep=keep, cache_aware=False, hardware_dir=hardware_dir)
    assert result.error is None, result.error
    return result, keep.graph


# ---------------------------------------------------------------------------- solar's own profile, joined
@pytest.mark.parametrize("name,text", [("mlp.py", MLP), ("cnn.py", CNN)])
def test_a_cpu_profile_joins_every_op_and_sums_to_the_whole_run(tmp_path, on_host, name, text):
    path = _write(tmp_path, name, text)
    result, graph = _analysed(path, on_host)
    row = result.rows[0]
    calls = ir_calls(graph, result.per_op)
    profile = profile_workload(path, iterations=10)
    joined = join_profile(row.workload, "host", "torch eager", calls, profile, row.onchip_buffer_bytes,
                          row.dram_bytes_per_s)
    # every IR op that moves data is matched to a call of the profile, in every iteration
    assert joined.not_attributed == []
    kernel_rows = {r.label for r in result.per_op}
    joined_rows = {label for r in joined.rows for label in r.ir_ops.split("+")}
    assert joined_rows == kernel_rows
    assert all(r.runs == 10 and r.measured_s > 0 and r.min_s > 0 for r in joined.rows)
    assert joined.violations == []
    # ranked by recoverable time; the table prints every call with its headroom
    recoverable = [r.recoverable_s for r in joined.rows]
    assert recoverable == sorted(recoverable, reverse=True)
    text_out = format_measured_ops([joined], top=None)
    assert all(r.call in text_out for r in joined.rows) and "0 violation(s)" in text_out
    # the per-op rows of one-op calls carry the call's figures
    rows = with_measured_rows(result.per_op, [joined])
    single = {r.ir_ops: r for r in joined.rows if "+" not in r.ir_ops}
    for r in rows:
        if r.label in single:
            assert r.measured_s == single[r.label].measured_s
            assert r.headroom == pytest.approx(r.measured_s / r.time_s)
            assert r.pct_of_sol == pytest.approx(100 * r.time_s / r.measured_s)


@pytest.mark.slow  # two timings compared: only meaningful on an otherwise idle machine
@pytest.mark.parametrize("name,text", [("mlp.py", MLP), ("cnn.py", CNN)])
def test_the_joined_calls_sum_to_the_whole_run_measured_without_the_profiler(tmp_path, on_host, name, text):
    path = _write(tmp_path, name, text)
    result, graph = _analysed(path, on_host)
    row = result.rows[0]
    joined = join_profile(row.workload, "host", "torch eager", ir_calls(graph, result.per_op),
                          profile_workload(path, iterations=10), row.onchip_buffer_bytes, row.dram_bytes_per_s)
    # the joined calls' medians sum to the whole run's median within 20 % (the workload-level
    # measurement, without the profiler, caches flushed the same way)
    whole = measure_workload(path, MeasureOptions(backends=("eager",), timing=TimingOptions(runs=10, warmup=3)))
    median = whole.timings["eager"].median_s
    assert 0.8 * median <= joined.measured_total_s <= 1.2 * median, (joined.measured_total_s, median)


def test_the_ir_knows_each_ops_call_before_decompositions(tmp_path, on_host):
    result, graph = _analysed(_write(tmp_path, "mlp.py", MLP), on_host)
    calls = {c.label: c for c in ir_calls(graph, result.per_op)}
    assert set(calls) == {"linear#1", "gelu#1", "linear#2"}
    assert calls["linear#1"].op == "aten.linear.default"
    assert [r.op for r in calls["linear#1"].rows] == ["aten.addmm.default"]  # the permute is a view: no row
    assert {r.call for r in result.per_op} == {"linear#1", "gelu#1", "linear#2"}


def test_a_jax_function_is_timed_equation_by_equation_and_joined(tmp_path, on_host):
    path = _write(tmp_path, "jax_fn.py", JAX_FN)
    result, graph = _analysed(path, on_host)
    row = result.rows[0]
    profile = profile_workload(path, iterations=5, warmup=1)
    assert len(profile.iterations) == 5
    joined = join_profile(row.workload, "host", "jax eager", ir_calls(graph, result.per_op), profile,
                          row.onchip_buffer_bytes, row.dram_bytes_per_s)
    assert joined.not_attributed == [] and joined.violations == []
    assert {r.op for r in joined.rows} >= {"dot_general", "tanh", "add"}
    assert all(r.measured_s > 0 for r in joined.rows)


def test_a_compiled_backend_has_no_per_op_times(tmp_path):
    from solar_assets.measure import MeasureError

    with pytest.raises(MeasureError, match="fuses the ops"):
        profile_workload(_write(tmp_path, "mlp.py", MLP), backend="compile")


# ---------------------------------------------------------------------------- the user's own trace
def _user_trace(workload: Path, out: Path, steps: int = 4) -> Path:
    """What a user writes: their model under torch.profiler with a schedule, exported."""
    import importlib.util

    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    spec = importlib.util.spec_from_file_location("user_model", workload)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Model(*module.get_init_inputs()).eval()
    inputs = module.get_inputs()
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], with_stack=True,
                                  schedule=schedule(wait=1, warmup=1, active=steps)) as prof:
        for _ in range(steps + 2):
            model(*inputs)
            prof.step()
    prof.export_chrome_trace(str(out))
    return out


@pytest.mark.slow
def test_solar_headroom_reads_a_trace_torch_profiler_wrote(tmp_path, on_host, capsys):
    workload = _write(tmp_path, "mlp.py", MLP)
    trace = _user_trace(workload, tmp_path / "trace.json")
    profile = profile_of(read_trace(trace))
    assert len(profile.iterations) == 4  # the ProfilerStep#N annotations
    assert [c.name for c in profile.iterations[0]] == ["aten::linear", "aten::gelu", "aten::linear"]
    assert profile.iterations[0][0].modules[-1] == "Linear"  # with_stack: the nn.Module calls

    assert main(["headroom", "--profile", str(trace), str(workload), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["hardware"] == "host" and doc["iterations"] == 4 and doc["violations"] == 0
    assert {r["call"] for r in doc["rows"]} == {"linear#1", "gelu#1", "linear#2"}
    assert all(r["measured_s"] > 0 and r["runs"] == 4 for r in doc["rows"])
    assert doc["not_attributed"] == []

    gz = tmp_path / "trace.json.gz"  # what tensorboard's trace handler writes
    gz.write_bytes(gzip.compress(trace.read_bytes()))
    assert main(["headroom", "--profile", str(gz), str(workload), "--per-op", "all", "--csv",
                 str(tmp_path / "ops.csv")]) == 0
    out = capsys.readouterr().out
    assert "linear#1" in out and "recoverable" in out
    assert len((tmp_path / "ops.csv").read_text().splitlines()) == 4


@pytest.mark.slow
def test_a_planted_violation_is_reported_never_clamped(tmp_path, on_host, capsys):
    workload = _write(tmp_path, "mlp.py", MLP)
    trace = _user_trace(workload, tmp_path / "trace.json", steps=2)
    data = json.loads(trace.read_text())
    for e in data["traceEvents"]:  # the first GEMM call "ran" in a nanosecond, its callees too
        if e.get("cat") == "cpu_op" and e.get("name") == "aten::linear":
            start, end = e["ts"], e["ts"] + e["dur"]
            for inner in data["traceEvents"]:
                if inner.get("cat") == "cpu_op" and start <= inner.get("ts", -1) <= end:
                    inner["dur"] = 1e-3
            break
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps(data))
    assert main(["headroom", "--profile", str(planted), str(workload), "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    [bad] = [r for r in doc["rows"] if r["violation"]]
    assert bad["call"] == "linear#1" and bad["min_s"] == pytest.approx(1e-9)
    assert bad["min_s"] < bad["floor_s"] and bad["audit"].startswith("VIOLATION")
    assert doc["violations"] == 1 and "VIOLATION" in captured.err


def test_bad_traces_get_one_line_naming_the_file(tmp_path, on_host, capsys):
    workload = _write(tmp_path, "mlp.py", MLP)
    for name, content in (("empty.json", ""), ("list.json", "[1, 2]"), ("obj.json", '{"a": 1}'),
                          ("noops.json", '{"traceEvents": [{"ph": "X", "cat": "python_function", "ts": 0, "dur": 1}]}')):
        bad = tmp_path / name
        bad.write_text(content)
        assert main(["headroom", "--profile", str(bad), str(workload)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(bad) in err[0], err
    assert main(["headroom", "--profile", str(tmp_path / "missing.json"), str(workload)]) == 2
    assert "missing.json" in capsys.readouterr().err
    assert main(["headroom", "--profile", str(tmp_path / "list.json")]) == 2  # no workload named
    assert "name the workload" in capsys.readouterr().err


# ---------------------------------------------------------------------------- the reader and the join, by hand
def _x(name, cat, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def test_the_reader_nests_calls_splits_iterations_and_attributes_device_kernels():
    events = []
    for step, base in enumerate((0, 1000)):
        events += [
            _x(f"ProfilerStep#{step}", "user_annotation", base, 900),
            _x("aten::linear", "cpu_op", base + 10, 300),
            _x("aten::addmm", "cpu_op", base + 20, 250),  # a callee: not a call of its own
            _x("cudaLaunchKernel", "cuda_runtime", base + 30, 5, correlation=10 * step + 1),
            _x("aten::relu_", "cpu_op", base + 400, 50),
            _x("cudaLaunchKernel", "cuda_runtime", base + 410, 5, correlation=10 * step + 2),
            # the kernels, on the device's stream, after their launches
            _x("sm90_gemm", "kernel", base + 500, 120, tid=7, correlation=10 * step + 1),
            _x("elementwise", "kernel", base + 650, 8, tid=7, correlation=10 * step + 2),
        ]
    events.append(_x("aten::empty", "cpu_op", 5000, 3, tid=2))  # another thread's op: not a call of the run
    profile = profile_of({"traceEvents": events})
    assert profile.device and len(profile.iterations) == 2
    for calls in profile.iterations:
        assert [c.name for c in calls] == ["aten::linear", "aten::relu_"]
        assert calls[0].host_s == pytest.approx(300e-6) and calls[0].device_s == pytest.approx(120e-6)
        assert calls[1].time_s == pytest.approx(8e-6)  # the kernel's time, not the host's


def test_a_trace_without_marks_is_one_iteration_and_says_so():
    profile = profile_of({"traceEvents": [_x("aten::mm", "cpu_op", 0, 10), _x("aten::relu", "cpu_op", 20, 5)]})
    assert len(profile.iterations) == 1 and [c.name for c in profile.iterations[0]] == ["aten::mm", "aten::relu"]
    assert any("one iteration" in n for n in profile.notes)
    with pytest.raises(ProfileError, match="no operator"):
        profile_of({"traceEvents": [_x("f", "python_function", 0, 1)]})


def test_names_agree_across_eager_and_export():
    assert op_key("aten::relu_") == op_key("aten.relu.default") == "relu"
    assert op_key("aten::add") == op_key("aten.add.Tensor") == "add"
    assert op_key("aten::_softmax") == "_softmax" and op_key("aten::__and__") == "__and__"
    assert op_key("dot_general") == "dot_general"


def test_alignment_keeps_step_over_a_dropped_and_an_added_call():
    from solar_assets.measure.op_join import IRCall

    ir = [IRCall("a", "aten.linear.default", "linear#1"), IRCall("b", "aten.dropout.default", "dropout#1"),
          IRCall("c", "aten.relu.default", "relu#1"), IRCall("d", "aten.linear.default", "linear#2")]
    run = [ProfiledCall("aten::linear", 1e-3), ProfiledCall("aten::empty", 1e-6), ProfiledCall("aten::relu", 1e-4),
           ProfiledCall("aten::linear", 1e-3)]
    assert align(ir, run) == [(0, 0), (2, 2), (3, 3)]


def test_the_floor_is_compute_and_the_traffic_no_cache_can_hold():
    from ir_schemas import PerOpRow

    def row(compute_s, nbytes):
        return PerOpRow(workload="w", hardware="h", rank=1, node="n", op="o", module="", macs=0, flops=0,
                        bytes=nbytes, compute_s=compute_s, memory_s=nbytes / 1e9, time_s=max(compute_s, nbytes / 1e9),
                        share=1.0, limiter="memory", ir_nodes=1, exact=True)

    # 10 MB through a 1 MB buffer at 1 GB/s: at least 8 MB cross DRAM, 8 ms
    assert floor_s([row(1e-6, 10_000_000)], 1_000_000, 1e9) == pytest.approx(8e-3)
    assert floor_s([row(5e-3, 1_000_000)], 1_000_000, 1e9) == pytest.approx(5e-3)  # fits: compute alone


def test_the_roofline_places_a_measured_op_below_its_sol_point(tmp_path, saved_figures):
    from ir_schemas import PerOpRow
    from solar_assets.report.roofline_plot import plot_roofline
    from test_measure import row as report_row

    op = PerOpRow(workload="w", hardware="host", rank=1, node="addmm", op="aten.addmm.default", module="fc",
                  macs=5 * 10**8, flops=10**9, bytes=10**7, compute_s=1e-4, memory_s=1e-4, time_s=1e-4, share=1.0,
                  limiter="compute", ir_nodes=1, exact=True, measured_s=4e-4)
    plot_roofline([report_row(workload="w")], tmp_path / "r.png", per_op=[op])
    [fig] = saved_figures
    crosses = [line for ax in fig.axes for line in ax.get_lines() if line.get_marker() == "x"]
    assert crosses and list(crosses[0].get_ydata()) == pytest.approx([10**9 / 4e-4 / 1e12])
    assert list(crosses[0].get_xdata()) == pytest.approx([100.0])  # the op's own intensity


@pytest.mark.slow
def test_solar_analyze_measure_per_op_prints_the_ranked_calls_and_writes_the_csv(tmp_path, on_host, capsys):
    workload = _write(tmp_path, "mlp.py", MLP)
    out = tmp_path / "report"
    assert main(["analyze", str(workload), "--hardware", "host", "--measure", "--per-op", "all", "--runs", "3",
                 "--no-dagster", "--no-progress", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    block = text[text.index("Per-op headroom"):]
    assert "mlp on host, torch eager: 3 calls measured over 10 iterations" in block
    assert "0 violation(s) of a call's floor" in block
    lines = (out / "measured_per_op.csv").read_text().splitlines()
    assert len(lines) == 4 and lines[0].startswith("workload,hardware,backend,rank,call")
    document = json.loads((out / "report.json").read_text())
    from ir_schemas import ReportDocument

    assert len(ReportDocument.model_validate(document).measured_per_op) == 3  # the calls, in report.json too
    per_op = document["per_op"]
    assert all(r["measured_s"] > 0 and r["pct_of_sol"] > 0 for r in per_op)  # each op is its call alone here
