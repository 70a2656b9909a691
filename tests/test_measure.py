"""Measured runtime, headroom and the violation audit, and the charts that show them."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ir_schemas import ReportRow
from solar_assets.measure import (
    MeasureError,
    MeasureOptions,
    NoFlush,
    Timing,
    TimingOptions,
    WorkloadMeasurement,
    add_measurement,
    measure_workload,
    parse_backends,
    time_runs,
)
from solar_assets.measure.flush import CacheFlusher
from solar_assets.report import (
    format_headroom_table,
    format_projection,
    projection_frame,
    report_pngs,
    write_report,
)

TINY_TORCH = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(32, 16)

        def forward(self, x):
            return torch.relu(self.fc(x))

    def get_inputs():
        return [torch.randn(8, 32)]

    def get_init_inputs():
        return []
""")
TINY_JAX = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp

    def get_inputs():
        return [jax.random.normal(jax.random.key(0), (8, 32))]

    def forward(x):
        return jnp.tanh(x) * 2.0
""")
FAST = TimingOptions(runs=3, warmup=1, min_runs=1)


def row(hardware: str = "host", **changes) -> ReportRow:
    base = dict(
        workload="tiny", source="tiny.py", hardware=hardware, dtype="float32", translator="tracer", validated=True,
        max_abs_error=0.0, max_rel_error=0.0, macs=1000, flops=2000, bytes_unfused=4 * 2**20, bytes_fused=2**20,
        sol_unfused_s=2e-3, sol_fused_s=1e-3, bound_unfused="memory", bound_fused="memory",
        sol_unfused_graph_s=1.5e-3, intensity_unfused_flop_per_byte=0.1, intensity_fused_flop_per_byte=0.5,
        peak_flop_per_s=1e11, dram_bytes_per_s=1e10, einsums=3, onchip_buffer_bytes=32 * 2**20,
    )
    return ReportRow(**{**base, **changes})


def measurement(eager: tuple[float, ...], compiled: tuple[float, ...] | None = None) -> WorkloadMeasurement:
    m = WorkloadMeasurement("tiny", "tiny.py", "torch")
    m.timings["eager"] = Timing("eager", "torch eager", eager)
    if compiled is not None:
        m.timings["compile"] = Timing("compile", "torch.compile", compiled)
    return m


# ---------------------------------------------------------------------------- options and timing
def test_backends_parse_in_order_with_aliases():
    assert parse_backends("eager,compile") == ("eager", "compile")
    assert parse_backends("jit, eager,jit") == ("compile", "eager")
    from solar_assets.measure.backends import resolve_backends
    assert resolve_backends(parse_backends("auto"), "torch") == ("eager",)
    assert resolve_backends(parse_backends("auto,eager"), "jax") == ("compile", "eager")  # jax.jit by default
    with pytest.raises(MeasureError, match="unknown backend 'cuda'"):
        parse_backends("eager,cuda")


def test_time_runs_flushes_before_every_call_and_respects_the_budget():
    calls, flushes = [], []
    first, times = time_runs(lambda: calls.append(1), TimingOptions(runs=5, warmup=2, min_runs=1), lambda: flushes.append(1))
    assert len(times) == 5 and len(calls) == 7 and len(flushes) == 7 and first >= 0
    slow = TimingOptions(runs=50, warmup=0, min_runs=2, budget_s=1e-9)  # the budget is spent after the first run
    _, times = time_runs(lambda: sum(range(1000)), slow, NoFlush())
    assert len(times) == 2


def test_timing_statistics():
    t = Timing("eager", "torch eager", tuple(float(x) for x in range(1, 12)))  # 1 … 11 s
    assert (t.median_s, t.min_s, t.p10_s, t.p90_s) == (6.0, 1.0, 2.0, 10.0)
    assert t.spread_s == 8.0 and t.ok
    assert not Timing("compile", "torch.compile", error="failed").ok


def test_cache_flusher_touches_its_buffer():
    flush = CacheFlusher(1 << 16)
    flush()
    flush()
    assert flush.nbytes == 1 << 16 and float(flush._buffer[0]) == 2.0


# ---------------------------------------------------------------------------- running workloads
def test_measure_a_torch_workload(tmp_path):
    path = tmp_path / "tiny_torch.py"
    path.write_text(TINY_TORCH)
    progress = []
    m = measure_workload(path, MeasureOptions(timing=FAST, flush_bytes=1 << 16), progress=progress.append)
    t = m.default
    assert t is not None and t.label == "torch eager" and len(t.times_s) == 3 and t.min_s > 0
    assert t.extra["threads"] in {"1", str(len(__import__("os").sched_getaffinity(0)))}
    assert any(p.startswith("measure torch eager: run") for p in progress)


def test_measure_a_jax_workload_eager_and_jit(tmp_path):
    pytest.importorskip("jax")
    path = tmp_path / "jax_tiny.py"
    path.write_text(TINY_JAX)
    m = measure_workload(path, MeasureOptions(backends=("eager", "jit"), timing=FAST, flush_bytes=1 << 16))
    assert m.framework == "jax"
    assert [t.label for t in m.timings.values()] == ["jax eager", "jax.jit"], m.notes
    assert all(t.ok for t in m.timings.values())


def test_a_broken_workload_is_a_note_not_an_exception(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import torch\n\ndef get_inputs():\n    return []\n")  # no Model
    m = measure_workload(path, MeasureOptions(timing=FAST, flush_bytes=1 << 16))
    assert m.default is None and "missing Model" in m.notes[0] and str(path) in m.notes[0]


# ---------------------------------------------------------------------------- headroom and the audit
def test_headroom_is_measured_over_bound_per_mode_and_backend():
    r = add_measurement(row(sol_cache_aware_s=1.2e-3), measurement((4e-3, 5e-3, 6e-3), (3e-3, 3e-3, 3e-3)))
    assert (r.measured_s, r.measured_backend, r.measured_min_s, r.measured_runs) == (5e-3, "torch eager", 4e-3, 3)
    assert r.headroom_fused == pytest.approx(5.0) and r.headroom_unfused == pytest.approx(2.5)
    assert r.headroom_cache_aware == pytest.approx(5e-3 / 1.2e-3)
    assert r.measured_compile_s == 3e-3 and r.headroom_fused_compile == pytest.approx(3.0)
    assert r.headroom_fused_eager == pytest.approx(5.0)
    assert not r.violation and r.violation_detail == ""


def test_no_cache_aware_bound_no_cache_aware_headroom():
    r = add_measurement(row(), measurement((5e-3,)))
    assert r.sol_cache_aware_s is None and r.headroom_cache_aware is None and r.headroom_fused == pytest.approx(5.0)


def test_a_run_below_the_fused_bound_is_a_violation_with_both_figures():
    r = add_measurement(row(), measurement((0.5e-3, 3e-3, 3e-3)))
    assert r.violation
    assert "VIOLATION: torch eager fastest run 500 µs < fused bound 1 ms" in r.violation_detail
    assert r.headroom_fused == pytest.approx(3.0)  # the median, never clamped to 1


def test_a_run_below_the_cache_aware_lower_bound_is_a_violation():
    r = add_measurement(row(sol_cache_aware_lb_s=2.5e-3, sol_cache_aware_s=2.8e-3), measurement((2e-3, 3e-3)))
    assert r.violation and "cache-aware lower bound 2.5 ms" in r.violation_detail


def test_a_run_below_only_the_best_modelled_cache_aware_schedule_is_explained():
    """The achievable figure is an upper bound on the optimum: beating it is no violation."""
    r = add_measurement(row(sol_cache_aware_lb_s=1.1e-3, sol_cache_aware_s=2.5e-3), measurement((2e-3, 3e-3)))
    assert not r.violation
    assert "explained: torch eager fastest run 2 ms < the best modelled cache-aware schedule 2.5 ms" \
        in r.violation_detail


def test_a_run_below_only_the_unfused_bound_is_explained_not_a_violation():
    r = add_measurement(row(), measurement((1.2e-3, 1.3e-3)))
    assert not r.violation
    assert "explained: torch eager fastest run 1.2 ms < unfused bound 2 ms" in r.violation_detail
    assert "3 IR kernels" in r.violation_detail and "32 MiB of cache" in r.violation_detail


def test_rows_of_other_hardware_are_left_alone():
    other = row(hardware="H100_SXM")
    assert add_measurement(other, measurement((1e-9,))) == other


def test_a_failed_backend_leaves_a_note_and_the_other_is_the_default():
    m = measurement((5e-3,))
    m.timings = {"compile": Timing("compile", "torch.compile", error="tiny.py: torch.compile failed: X"),
                 **m.timings}
    m.notes.append("tiny.py: torch.compile failed: X")
    r = add_measurement(row(), m)
    assert r.measured_backend == "torch eager" and r.measured_compile_s is None
    assert "torch.compile failed" in r.measured_note


# ---------------------------------------------------------------------------- tables, files, charts
def test_headroom_table_projection_and_charts(tmp_path):
    host = add_measurement(row(sol_cache_aware_s=1.2e-3), measurement((4e-3, 5e-3), (3e-3, 3e-3)))
    h100 = row(hardware="H100_SXM", sol_unfused_s=2e-6, sol_fused_s=1e-6, target_latency_s=2e-3,
               compute_factor_fused=0.01, bandwidth_factor_fused=0.02, min_bytes_per_s_unfused=2e9)
    rows = [host.model_copy(update={"target_latency_s": 2e-3, "compute_factor_fused": 20.0,
                                    "bandwidth_factor_fused": 0.05, "min_bytes_per_s_unfused": 2e9}), h100]
    table = format_headroom_table(rows)
    assert "torch eager" in table and "5×" in table and "H100_SXM" not in table
    assert "compiled" in table.splitlines()[0]  # both backends ran: per-backend columns
    frame = projection_frame(rows)
    assert list(frame.fusion_benefit) == [2.0, 2.0]
    assert frame.bandwidth_factor_unfused.tolist() == [pytest.approx(0.2), pytest.approx(2e9 / 1e10)]
    assert list(frame.meets_target_fused) == [True, True]
    assert "× bw unfused" in format_projection(rows)

    files = write_report(rows, tmp_path)
    assert {"headroom", "projection", "projection_csv"} <= set(files)
    assert set(report_pngs(tmp_path)) == {"roofline", "headroom", "projection"}
    md = files["markdown"].read_text()
    assert "## Headroom on this host" in md and "![headroom](report_headroom.png)" in md
    assert "## Cross-platform projection" in md
    write_report([row(hardware="H100_SXM")], tmp_path)  # no measurement, one hardware: stale charts go
    assert set(report_pngs(tmp_path)) == {"roofline"}


def test_measure_rows_fills_only_the_host_rows(tmp_path):
    from solar_assets.pipeline import measure_rows

    path = tmp_path / "tiny.py"
    path.write_text(TINY_TORCH)
    rows = measure_rows(path, [row(), row(hardware="B200")],
                        MeasureOptions(timing=FAST, flush_bytes=1 << 16))
    assert rows[0].measured_s is not None and rows[0].headroom_fused is not None
    assert rows[1].measured_s is None
    assert measure_rows(path, [row(hardware="B200")]) == [row(hardware="B200")]  # nothing to compare: no run
