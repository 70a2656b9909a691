"""One meaning per label (issue 26, item 2): for one workload, every figure shown in two places
-- the CLI's table, report.json and the Dagster assets' metadata -- is the same quantity under
the same name; where two quantities are alike they carry two names."""
from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg
import pytest

from solar_assets.cli import main
from solar_assets.report.table import format_bytes, format_count, format_seconds, work_dtypes

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """``solar analyze`` (the Dagster path) on a bf16 block: its table, report.json, the assets."""
    home = tmp_path_factory.mktemp("labels")
    out = home / "report"
    env = {"SOLAR_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        assert main(["analyze", str(REPO / "data" / "workloads" / "bf16_decoder_block.py"), "--hardware", "H100_SXM",
                     "--no-progress", "--home", str(home), "--output", str(out)]) == 0
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    (row,) = json.loads((out / "report.json").read_text())["rows"]
    from solar_assets.dagster_defs.runner import solar_instance

    with solar_instance(home) as instance:
        def metadata(asset: str, partition) -> dict:
            (record,) = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[str(partition)]), limit=1).records
            materialization = record.event_log_entry.asset_materialization
            return {k: getattr(v, "value", v) for k, v in materialization.metadata.items()}

        graph = metadata("einsum_graph", _key(instance, "workload"))
        bounds = metadata("sol_bounds", dg.MultiPartitionKey({"workload": _key(instance, "workload"),
                                                              "hardware": "H100_SXM"}))
    return row, graph, bounds, (out / "report.md").read_text()


def _exact_bytes(text: str) -> int:
    """``1.21 MiB (1,270,784 B)`` -> 1270784: the asset's exact count beside its rounded one."""
    import re

    return int(re.search(r"\(([\d,]+) B\)", text)[1].replace(",", ""))


def _key(instance, name: str) -> str:
    (key,) = [k for k in instance.get_dynamic_partitions(name) if k.startswith("bf16_decoder_block")]
    return key


@pytest.mark.slow
def test_the_same_label_is_the_same_figure_in_the_report_and_the_assets(analysed):
    from ir_schemas import ReportRow

    row, graph, bounds, _ = analysed
    r = ReportRow.model_validate(row)
    assert graph["MACs"] == r.macs and graph["FLOPs"] == r.flops
    # the einsum graph's traffic is per IR kernel: the report's bytes_unfused_kernel, not its bytes_unfused
    assert "bytes unfused" not in graph
    assert _exact_bytes(graph["bytes unfused per IR kernel"]) == r.bytes_unfused_kernel
    assert _exact_bytes(graph["bytes fused (graph I/O)"]) == r.bytes_fused
    assert bounds["SOL unfused"] == f"{format_seconds(r.sol_unfused_s)}, {r.bound_unfused}-bound"
    assert bounds["SOL fused"] == f"{format_seconds(r.sol_fused_s)}, {r.bound_fused}-bound"
    assert bounds["SOL cache-aware lower bound"] == f"{format_seconds(r.sol_cache_aware_lb_s)}, {r.bound_cache_aware_lb}-bound"
    assert bounds["cache-aware, best modelled schedule"].startswith(format_seconds(r.sol_cache_aware_s))
    assert (bounds["bound_unfused"], bounds["bound_fused"], bounds["dtype"]) == (r.bound_unfused, r.bound_fused, r.dtype)
    assert bounds["precision"] == work_dtypes(r) == "bf16+fp32"  # what carries the work: another name than dtype
    assert r.dtype == "bfloat16"
    assert "peak FLOP/s" not in bounds  # the blended peak is named as what it is
    assert bounds["effective peak (FLOPs / busiest unit's time)"] == format_count(r.peak_flop_per_s, "FLOP/s")
    assert "matrix" in bounds["unit peaks (busiest first)"] and bounds["unit peaks (busiest first)"] == r.peaks_fused
    assert bounds["DRAM bytes/s"] == format_count(r.dram_bytes_per_s, "B/s") == "3.35 TB/s"
    shared = set(graph) & set(bounds)  # a label on both assets means one thing
    assert all(graph[k] == bounds[k] for k in shared if k not in ("dtype",)), shared
    assert graph["dtype"] == bounds["dtype"]


def test_the_cli_table_prints_the_report_figures_under_their_names(analysed):
    from ir_schemas import ReportRow
    from solar_assets.report.table import format_table

    row, _, _, markdown = analysed
    r = ReportRow.model_validate(row)
    header, _, line = format_table([r], wide=False).splitlines()[1:4]
    names = [h for h in header.split("  ") if h.strip()]
    cells = [c.strip() for c in line.split("  ") if c.strip()]
    by_name = dict(zip([n.strip() for n in names], cells))
    assert by_name["precision"] == "bf16+fp32" and "dtype" not in by_name
    assert by_name["MACs"] == format_count(r.macs) and by_name["fused bytes"] == format_bytes(r.bytes_fused)
    assert by_name["fused"].startswith(format_seconds(r.sol_fused_s))
    assert by_name["cache-aware"].startswith(format_seconds(r.sol_cache_aware_lb_s))  # the lower bound
    wide = format_table([r], wide=True).splitlines()[0]
    assert "best modelled schedule" in wide and "SOL cache-aware lower bound" in wide
    assert "SOL cache-aware  " not in wide + "  "  # the schedule is not labelled as a SOL bound
    assert format_seconds(r.sol_fused_s) in markdown
