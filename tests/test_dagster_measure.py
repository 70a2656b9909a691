"""``measured_runtime`` as a Dagster asset (workload × backend, from the host spec), the report's
headroom computed from it, and the ``no_sol_violation`` check judged on provable bounds only."""
from __future__ import annotations

import statistics
from types import SimpleNamespace

import dagster as dg
import pytest

from solar_assets.dagster_defs.asset_checks import violation_result
from solar_assets.dagster_defs.partitions import register_partitions, workload_backend_key, workload_hardware_key
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.runner import solar_instance
from solar_assets.dagster_defs.assets import headroom_report, measured_runtime
from dagster_helpers import materialize as _materialize

SMALL = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return torch.relu(x @ y)


m = 32
k = 48
n = 16


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
"""


def _check(rows):
    return violation_result(rows)


def test_no_sol_violation_fails_only_on_flagged_rows():
    ok = SimpleNamespace(workload="a", hardware="host", violation=False, violation_detail="explained: ...",
                         measured_s=1e-3)
    bad = SimpleNamespace(workload="b", hardware="host", violation=True,
                          violation_detail="VIOLATION: torch eager fastest run 1 µs < fused bound 2 µs",
                          measured_s=2e-6)
    assert _check([ok]).passed
    result = _check([ok, bad])
    assert not result.passed
    assert "b on host: VIOLATION: torch eager fastest run 1 µs < fused bound 2 µs" in result.description
    assert "a on host" not in result.description




@pytest.mark.slow
def test_measured_runtime_feeds_the_report_headroom(tmp_path, monkeypatch):
    from solar_assets.dagster_defs.assets import BOUND_ASSETS, WORKLOAD_ASSETS, hardware_spec
    from solar_assets.hardware.detect import write_host_spec

    hardware = tmp_path / "hardware"
    hardware.mkdir()
    _, spec = write_host_spec(hardware / "host.yaml", check_gemm=False, stream_array_bytes=64 * 2**20)
    workloads = tmp_path / "workloads"
    workloads.mkdir()
    (workloads / "small_mm.py").write_text(SMALL)
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(hardware))
    config = SolarConfig.default(tmp_path / "home", workload_dir=workloads)
    assert config.hardware_dir == str(hardware)
    with solar_instance(tmp_path / "home") as instance:
        register_partitions(instance, ["small_mm"], ["host"])
        assert _materialize(instance, config, [hardware_spec], "host").success
        assert _materialize(instance, config, WORKLOAD_ASSETS, "small_mm").success
        bounds = [a for a in BOUND_ASSETS if a.key.path[-1] != "inverse_roofline"]
        assert _materialize(instance, config, bounds, workload_hardware_key("small_mm", "host")).success

        runs = {"ops": {"measured_runtime": {"config": {"runs": 5, "min_runs": 5}}}}
        run = _materialize(instance, config, [measured_runtime], workload_backend_key("small_mm", "torch_eager"), runs)
        assert run.success, run.get_step_failure_events()
        value = run.output_for_node("measured_runtime")
        timing = value.measurement.timings["eager"]
        assert len(timing.times_s) == 5 and min(timing.times_s) > 0
        assert value.host_digest == spec.digest()
        # lineage: the materialisation records the host spec as an input (Dagster hashes the
        # versions of a partition-mapped input), beside the workload's source
        record = instance.get_latest_materialization_event(measured_runtime.key)
        tags = record.asset_materialization.tags
        assert tags.get("dagster/input_data_version/hardware_spec")
        assert tags.get("dagster/input_data_version/workload_source")

        wrong = _materialize(instance, config, [measured_runtime], workload_backend_key("small_mm", "jax_jit"), runs)
        assert not wrong.success  # a torch file has no jax.jit measurement

        report = _materialize(instance, config, [headroom_report])
        assert report.success
        (row,) = report.output_for_node("headroom_report")
        assert row.hardware == "host" and row.measured_backend == "torch eager"
        assert row.measured_s == pytest.approx(statistics.median(timing.times_s))
        assert row.headroom_fused == pytest.approx(statistics.median(timing.times_s) / row.sol_fused_s)
        assert row.violation == (min(timing.times_s) < row.sol_fused_s or
                                 (row.sol_cache_aware_lb_s is not None and min(timing.times_s) < row.sol_cache_aware_lb_s))


@pytest.mark.slow
def test_measured_per_op_is_an_asset_with_lineage_to_the_host_spec(tmp_path, monkeypatch):
    from solar_assets.dagster_defs.assets import WORKLOAD_ASSETS, hardware_spec, measured_per_op
    from solar_assets.hardware.detect import write_host_spec

    hardware = tmp_path / "hardware"
    hardware.mkdir()
    _, spec = write_host_spec(hardware / "host.yaml", check_gemm=False, stream_array_bytes=64 * 2**20)
    workloads = tmp_path / "workloads"
    workloads.mkdir()
    (workloads / "small_mm.py").write_text(SMALL)
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(hardware))
    config = SolarConfig.default(tmp_path / "home", workload_dir=workloads)
    with solar_instance(tmp_path / "home") as instance:
        register_partitions(instance, ["small_mm"], ["host"])
        assert _materialize(instance, config, [hardware_spec], "host").success
        assert _materialize(instance, config, WORKLOAD_ASSETS, "small_mm").success
        run = _materialize(instance, config, [measured_per_op], workload_backend_key("small_mm", "torch_eager"))
        assert run.success, run.get_step_failure_events()
        joined = run.output_for_node("measured_per_op")
        assert {r.call for r in joined.rows} == {"matmul#1", "relu#1"} and joined.not_attributed == []
        assert all(r.measured_s > 0 and r.runs == joined.iterations for r in joined.rows)
        record = instance.get_latest_materialization_event(measured_per_op.key)
        tags = record.asset_materialization.tags
        for parent in ("hardware_spec", "einsum_graph", "workload_source"):
            assert tags.get(f"dagster/input_data_version/{parent}"), parent
        assert record.asset_materialization.metadata["host spec digest"].value == spec.digest()
        compiled = _materialize(instance, config, [measured_per_op], workload_backend_key("small_mm", "torch_compile"))
        assert not compiled.success  # a compiled run fuses the ops: no per-op times
