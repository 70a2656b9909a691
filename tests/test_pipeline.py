"""The whole chain without Dagster: one small workload end to end, and bad input contained."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from workload_texts import TINY_LINEAR_RELU
from solar_assets import pipeline
from solar_assets.report import format_table, write_report
from solar_assets.report.writers import read_report

TINY = TINY_LINEAR_RELU
TINY_MACS = 8 * 32 * 16


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("workloads") / "tiny_mlp.py"
    path.write_text(TINY)
    return path


@pytest.fixture(scope="module")
def tiny_result(tiny, tmp_path_factory) -> pipeline.WorkloadResult:
    return pipeline.analyze_workload(tiny, ["H100_SXM", "B200"], target_latency_s=1e-6,
                                     cache_dir=tmp_path_factory.mktemp("cache"))


def test_small_workload_end_to_end(tiny, tiny_result):
    assert tiny_result.ok, tiny_result.error
    assert [r.hardware for r in tiny_result.rows] == ["H100_SXM", "B200"]
    assert set(tiny_result.seconds) == set(pipeline.STAGES)
    row = tiny_result.rows[0]
    assert (row.workload, row.source, row.translator, row.validated) == ("tiny_mlp", str(tiny), "tracer", True)
    assert row.macs == TINY_MACS
    # x, W, b and y through DRAM once each, float32
    assert row.bytes_fused == 4 * (8 * 32 + 32 * 16 + 16 + 8 * 16)
    assert row.bytes_unfused >= row.bytes_fused
    assert row.flops >= 2 * row.macs
    assert 0 < row.sol_fused_s <= row.sol_unfused_graph_s <= row.sol_unfused_s
    expected_fused = max(row.flops / row.peak_flop_per_s, row.bytes_fused / row.dram_bytes_per_s)
    assert row.sol_fused_s == pytest.approx(expected_fused, rel=1e-12)
    assert row.bound_fused == "memory"  # a 8x32x16 layer is far left of any GPU's ridge
    assert row.target_latency_s == 1e-6
    assert row.min_bytes_per_s_fused == pytest.approx(row.bytes_fused / 1e-6)
    assert row.bandwidth_factor_fused == pytest.approx(row.min_bytes_per_s_fused / row.dram_bytes_per_s)


def test_rows_round_trip_through_the_report_files(tiny_result, tmp_path):
    paths = write_report(tiny_result.rows, tmp_path, errors=["x.py: broken"])
    several = len({r.hardware for r in tiny_result.rows}) > 1  # then the cross-platform projection too
    assert {p.name for p in tmp_path.iterdir()} == {"report.csv", "report.json", "report.md", "report_roofline.png",
                                                    *(("report_projection.csv", "report_projection.png") if several
                                                      else ())}
    rows = read_report(paths["json"]).rows  # report.json: the document with the rows (ir_schemas/REPORT.md)
    assert rows == tiny_result.rows
    assert paths["roofline"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = paths["markdown"].read_text()
    assert "tiny_mlp" in markdown and "x.py: broken" in markdown
    assert "tiny_mlp" in format_table(rows).splitlines()[2]


def test_broken_workload_names_the_file_and_the_others_still_run(tiny, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\n\ndef get_inputs(:\n")
    missing_model = tmp_path / "no_model.py"
    missing_model.write_text("import torch\n\ndef get_inputs():\n    return []\n")
    results = pipeline.analyze_workloads([broken, tiny, missing_model], ["H100_SXM"], cache_dir=tmp_path / "cache")
    by_name = {r.workload: r for r in results}
    assert str(broken) in by_name["broken"].error and "SyntaxError" in by_name["broken"].error
    assert by_name["broken"].failed_stage == "trace" and by_name["broken"].rows == []
    assert str(missing_model) in by_name["no_model"].error and "Model" in by_name["no_model"].error
    assert by_name["tiny_mlp"].ok and by_name["tiny_mlp"].rows[0].macs == TINY_MACS
    assert all("\n" not in r.error for r in results if r.error)


def test_missing_file_and_unknown_hardware_are_errors_not_exceptions(tiny, tmp_path):
    gone = pipeline.analyze_workload(tmp_path / "gone.py", ["H100_SXM"])
    assert str(tmp_path / "gone.py") in gone.error
    unknown = pipeline.analyze_workload(tiny, ["NO_SUCH_GPU"], cache_dir=tmp_path)
    assert "NO_SUCH_GPU" in unknown.error and unknown.rows == []


def test_failed_validation_gates_the_bounds(tiny, tmp_path, monkeypatch):
    import solar_assets.validate as validate

    real = validate.validate_program

    def wrong(program, golden, **kwargs):
        result = real(program, golden, **kwargs)
        bad = dataclasses.replace(result.checks[0], ok=False, max_abs_error=3.0, message="max abs error 3 > 1e-4")
        return dataclasses.replace(result, ok=False, checks=[bad, *result.checks[1:]])

    monkeypatch.setattr(validate, "validate_program", wrong)
    result = pipeline.analyze_workload(tiny, ["H100_SXM"], cache_dir=tmp_path)
    assert result.failed_stage == "validate" and result.rows == []
    assert str(tiny) in result.error and "failed validation" in result.error and "max abs error 3" in result.error


def test_readme_workload_example_runs(tmp_path):
    """The README's "Adding a workload" example is a working workload (docs quoted from code that runs)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Adding a workload", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "readme_example.py"
    path.write_text(example)
    result = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=tmp_path / "cache")
    assert result.ok, result.error
    assert result.rows[0].macs == TINY_MACS
