"""The Dagster layer: the definitions load, and one workload × H100_SXM materialises end to end."""
from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from solar_assets.dagster_defs.partitions import register_partitions, workload_hardware_key
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.runner import solar_instance
from solar_assets.dagster_defs.assets import BOUND_ASSETS, WORKLOAD_ASSETS, hardware_spec, headroom_report
from dagster_helpers import materialize as _materialize

REPO = Path(__file__).resolve().parents[1]
GEMM = REPO / "data" / "workloads" / "gemm.py"


def test_definitions_load():
    from solar_assets.dagster_defs.definitions import defs

    dg.Definitions.validate_loadable(defs)
    keys = {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"workload_source", "golden_outputs", "ir_translation", "ir_validation", "einsum_graph",
            "hardware_spec", "sol_bounds", "inverse_roofline", "headroom_report", "cache_aware_bound", "ski_slope",
            "workload_file", "hardware_file", "measured_runtime"} <= keys
    graph = defs.resolve_asset_graph()
    assert dg.AssetKey("hardware_spec") in graph.get(dg.AssetKey("measured_runtime")).parent_keys  # lineage to the host
    checks = {key.name for key in graph.asset_check_keys}
    assert checks == {"bounds_table", "all_translated_validated", "no_sol_violation"}




def test_gemm_on_h100_materialises_to_bounds(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path))
    config = SolarConfig.default(tmp_path, workload_dir=GEMM.parent, target_latency_s=1e-3)
    with solar_instance(tmp_path) as instance:
        register_partitions(instance, ["gemm"], ["H100_SXM"])
        assert _materialize(instance, config, [hardware_spec], "H100_SXM").success
        run = _materialize(instance, config, WORKLOAD_ASSETS, "gemm")
        assert run.success, run.get_step_failure_events()
        ir_meta = run.asset_materializations_for_node("ir_translation")[0].metadata
        assert "gemm" in ir_meta["IR"].value and ir_meta["translator"].value == "tracer"
        graph_meta = run.asset_materializations_for_node("einsum_graph")[0].metadata
        assert graph_meta["MACs"].value == 1024**3

        run = _materialize(instance, config, BOUND_ASSETS, workload_hardware_key("gemm", "H100_SXM"))
        assert run.success, run.get_step_failure_events()
        row = run.output_for_node("sol_bounds").row
        assert (row.workload, row.hardware, row.macs, row.flops) == ("gemm", "H100_SXM", 1024**3, 2 * 1024**3)
        assert row.bytes_fused == 3 * 1024 * 1024 * 4
        assert row.bound_fused == "compute"
        assert row.sol_fused_s == pytest.approx(2 * 1024**3 / 67e12)
        bounds_meta = run.asset_materializations_for_node("sol_bounds")[0].metadata
        assert bounds_meta["bound_fused"].value == "compute" and "| fused |" in bounds_meta["bounds"].value
        assert "| cache_aware |" in bounds_meta["bounds"].value and row.bytes_cache_aware == row.bytes_fused
        assert bounds_meta["roofline"].value.startswith("![roofline of gemm on H100_SXM](data:image/png;base64,")
        assert (tmp_path / "reports" / "roofline" / "gemm@H100_SXM.png").is_file()
        inverse = run.output_for_node("inverse_roofline")
        assert inverse.fused.min_flop_per_s == pytest.approx(2 * 1024**3 / 1e-3)
        outcome = run.output_for_node("cache_aware_bound")
        assert outcome.ok and outcome.capacity_bytes == 50 * 2**20
        assert outcome.bytes == row.bytes_fused  # 12 MiB of operands fit the 50 MiB L2: compulsory only
        ca_meta = run.asset_materializations_for_node("cache_aware_bound")[0].metadata
        assert ca_meta["proven optimal"].value is True

        report_config = {"workloads": ["gemm"], "hardware": ["H100_SXM"], "failures": []}
        run = _materialize(instance, config, [headroom_report],
                           run_config={"ops": {"headroom_report": {"config": report_config}}})
        assert run.success, run.get_step_failure_events()
        (report_row,) = run.output_for_node("headroom_report")
        assert report_row.sol_fused_s == row.sol_fused_s and report_row.target_latency_s == 1e-3
        assert report_row.bytes_cache_aware == outcome.bytes and report_row.sol_cache_aware_s == row.sol_fused_s
    assert (tmp_path / "reports" / "skislope" / "gemm.png").is_file()
    assert (tmp_path / "reports" / "skislope" / "gemm.csv").is_file()
    assert (tmp_path / "reports" / "report.json").is_file()
    assert (tmp_path / "reports" / "report_roofline.png").is_file()


def test_bad_workload_fails_its_run_with_a_message_naming_the_file(tmp_path):
    from solar_assets.dagster_defs.runner import failure_message

    (tmp_path / "broken.py").write_text("import torch\nraise RuntimeError('no')\n")
    config = SolarConfig.default(tmp_path, workload_dir=tmp_path)
    with solar_instance(tmp_path) as instance:
        register_partitions(instance, ["broken"])
        run = _materialize(instance, config, WORKLOAD_ASSETS, "broken")
        assert not run.success
        message = failure_message(run, tmp_path / "broken.py")
    assert str(tmp_path / "broken.py") in message and "RuntimeError: no" in message


CALL_COUNTING = '''\
import pathlib

import torch
import torch.nn as nn

CALLS = pathlib.Path(__file__).with_name("calls.txt")


class Model(nn.Module):
    """Doubles its scale at every call (counted in a file beside it): no trace reproduces it."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        calls = int(CALLS.read_text()) if CALLS.exists() else 0
        CALLS.write_text(str(calls + 1))
        return self.fc(x) * float(2 ** calls)


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return [32, 16]
'''


@pytest.mark.slow
def test_failed_validation_fails_ir_validation_with_its_table_and_stops_downstream(tmp_path):
    """A real failure (the step runs in a worker: a patched validator in this process would not
    reach it): the IR bakes in the scale of the traced call, the golden run's call has another."""
    workloads = tmp_path / "workloads"
    workloads.mkdir()
    (workloads / "counting.py").write_text(CALL_COUNTING)
    config = SolarConfig.default(tmp_path, workload_dir=workloads)
    with solar_instance(tmp_path) as instance:
        register_partitions(instance, ["counting"], ["H100_SXM"])
        run = _materialize(instance, config, WORKLOAD_ASSETS, "counting")
    assert not run.success
    (failure,) = run.get_step_failure_events()
    assert failure.step_key == "ir_validation"
    user = failure.step_failure_data.user_failure_data
    assert "counting.py" in user.description and "failed validation" in user.description
    assert user.metadata["verdict"].value == "FAIL" and user.metadata["checks"].value.records
    assert run.is_node_success("ir_translation") and not run.is_node_success("einsum_graph")
