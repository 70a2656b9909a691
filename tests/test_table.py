"""The CLI's compact report table: at most 120 characters on the shipped workloads and hardware,
unambiguous headers, ratios that say which way they run."""
from __future__ import annotations

from pathlib import Path

import pytest

from ir_schemas import ReportRow
from solar_assets.errors import SolarError
from solar_assets.hardware import list_hardware
from solar_assets.report.table import COMPACT, COLUMNS, TARGET_COLUMNS, format_table
from solar_assets.workloads import discover_workloads

REPO = Path(__file__).resolve().parents[1]


def row(workload: str, hardware: str, **extra) -> ReportRow:
    """A row whose cells are as wide as the formatters make them: 3 significant digits with a
    decimal point (99.9 ms, 99.9 G, 99.9 MiB) and a scaled validation."""
    fields = dict(workload=workload, source=f"{workload}.py", hardware=hardware, dtype="bfloat16", translator="tracer",
                  validated=True, validated_size="BATCH_SIZE=3,SEQ_LEN=65", max_abs_error=1e-6, max_rel_error=1e-7,
                  macs=99_900_000_000, flops=199_800_000_000, bytes_unfused=999 * 2**30, bytes_fused=int(99.9 * 2**20),
                  sol_unfused_s=0.0999, sol_fused_s=99.9e-6, bound_unfused="compute", bound_fused="compute",
                  sol_unfused_graph_s=0.5, intensity_unfused_flop_per_byte=1.0, intensity_fused_flop_per_byte=9.0,
                  peak_flop_per_s=1e15, dram_bytes_per_s=3e12, einsums=12, sol_cache_aware_s=99.9e-6,
                  bound_cache_aware="memory", bytes_cache_aware=int(99.9 * 2**20), cache_aware_proven_optimal=True,
                  sol_cache_aware_lb_s=99.9e-6, bound_cache_aware_lb="memory",
                  cache_aware_note="fused: 12 einsums in 1 segment",
                  peaks_fused="matrix 1e-07 s (fp8 1.979e+15 FLOP/s); vector.bf16 7e-09 s (bf16 1.34e+14 FLOP/s); "
                              "vector.fp32 6e-09 s (fp32 6.7e+13 FLOP/s)")  # the widest dtype label
    return ReportRow(**{**fields, **extra})


@pytest.fixture(scope="module")
def shipped_rows() -> list[ReportRow]:
    names = [p.stem for p in discover_workloads(REPO / "data" / "workloads")]
    assert len(names) >= 20
    return [row(w, h) for w in names for h in list_hardware()]  # solar analyze data/workloads --project


def test_default_table_fits_120_columns_on_the_shipped_workloads(shipped_rows):
    lines = format_table(shipped_rows, wide=False).splitlines()
    assert len(lines) == 3 + len(shipped_rows)  # the SOL group line, headers, rule: then every row once
    assert max(len(line) for line in lines) <= 120, max(lines, key=len)
    assert lines[0].strip(" -") == "SOL time, limited by FLOP or DRAM"
    assert "99.9 ms FLOP  99.9 µs FLOP  99.9 µs DRAM" in lines[3]  # the limiter beside each time


def test_default_columns_are_the_compact_ones_with_unique_headers(shipped_rows):
    header = format_table(shipped_rows[:1], wide=False).splitlines()[1]
    assert header.split() == ["workload", "hardware", "precision", "validated", "MACs", "fused", "bytes",
                              "unfused", "fused", "cache-aware"]
    assert [h for h, _, _ in COMPACT][-3:] == ["unfused", "fused", "cache-aware"]  # under "SOL time, ..."
    every = [h for h, _, _ in (*COLUMNS, *TARGET_COLUMNS)]
    assert len(every) == len(set(every)), "two columns with one header"


def test_compact_cache_aware_column_is_the_provable_lower_bound():
    """The compact table's SOL columns are lower bounds: its cache-aware cell is the provable
    bound (``sol_cache_aware_lb_s``), not the best modelled schedule, and so carries no solver marks."""
    marked = row("gemm", "H100_SXM", cache_aware_note="tiling-bound: the buffer forces more traffic",
                 cache_aware_proven_optimal=False, sol_cache_aware_lb_s=42.1e-6, bound_cache_aware_lb="memory")
    compact = format_table([marked], wide=False)
    assert "42.1 µs DRAM" in compact and "*" not in compact and "?" not in compact
    assert "99.9 MiB*?" in format_table([marked], wide=True)  # the achievable schedule, marked, in --wide


def test_ratios_say_which_way_they_run():
    hz500 = row("policy", "Jetson_AGX_Thor", target_latency_s=2e-3, sol_fused_s=2.06e-3, min_flop_per_s_fused=1.0,
                min_bytes_per_s_fused=1.0, min_flop_per_s_unfused=1.0, min_bytes_per_s_unfused=1.0,
                compute_factor_fused=0.4, bandwidth_factor_fused=1.03)
    compact = format_table([hz500], wide=False)
    assert "meets 500 Hz" in compact.splitlines()[1] and "no: 1.03× bw" in compact
    wide = format_table([hz500], wide=True)
    assert "1.03× the bandwidth" in wide and "0.4× the peak" in wide and "meets target (fused)" in wide


def test_columns_by_name_and_an_unknown_name():
    text = format_table([row("gemm", "H100_SXM")], columns=["workload", "sol_fused", "bound_fused"])
    header, _, line = text.splitlines()
    assert header.split() == ["workload", "SOL", "fused", "bound_fused"]
    assert line.split() == ["gemm", "99.9", "µs", "compute"]
    with pytest.raises(SolarError, match="unknown column"):
        format_table([row("gemm", "H100_SXM")], columns=["nope"])


def test_the_projection_adds_columns_and_repeats_no_bound():
    from solar_assets.report.table import format_projection_extra

    rows = [row("gemm", "H100_SXM", sol_unfused_s=3e-6, sol_fused_s=1.5e-6), row("gemm", "B200")]
    header, _, first, second = format_projection_extra(rows).splitlines()
    assert header.split("  ")[:3] == ["workload", "hardware", "fusion × (unfused/fused)"]
    assert first.split()[-1] == "2×" and "µs" not in first + second  # the bounds are in the main table only


def test_markdown_table_keeps_a_pipe_in_a_name_in_one_cell():
    text = format_table([row("pipe|name", "H100_SXM")], markdown=True, wide=False)
    header, _, body = text.splitlines()
    assert "pipe\\|name" in body
    assert body.replace("\\|", "").count("|") == header.count("|")  # as many cells as headers


def test_a_sixty_character_file_name_keeps_the_compact_table_in_120_columns():
    name = "level2_12_Gemm_Multiply_LeakyReLU_with_a_long_descriptive_tail"[:60]
    assert len(name) == 60
    lines = format_table([row(name, "Jetson_AGX_Thor"), row("gemm", "H100_SXM")], wide=False).splitlines()
    assert max(len(line) for line in lines) <= 120, max(lines, key=len)
    shown = lines[3].split("  ")[0]
    assert "…" in shown and shown.startswith(name[:6]) and shown.endswith(name[-4:])  # both ends kept
    assert lines[4].startswith("gemm ")  # a short name stays whole


def test_columns_give_every_field_with_its_unit():
    text = format_table([row("gemm", "H100_SXM")], columns=["sol_fused_s", "bytes_fused", "peak_flop_per_s",
                                                           "dram_bytes_per_s", "macs", "intensity_fused_flop_per_byte",
                                                           "max_abs_error", "einsums", "bound_fused"])
    header, _, line = text.splitlines()
    assert [c.strip() for c in line.split("  ") if c.strip()] == [
        "99.9 µs", "99.9 MiB", "1 PFLOP/s", "3 TB/s", "99.9 G", "9 FLOP/B", "1.0e-06", "12", "compute"]
    assert header.split() == ["sol_fused_s", "bytes_fused", "peak_flop_per_s", "dram_bytes_per_s", "macs",
                              "intensity_fused_flop_per_byte", "max_abs_error", "einsums", "bound_fused"]


def test_the_dtype_column_names_the_precisions_that_carry_the_work():
    from solar_assets.report.table import work_dtypes

    bf16_block = row("block", "H100_SXM", dtype="bfloat16", peaks_fused=(
        "matrix 1.526e-07 s (bf16 9.895e+14 FLOP/s); vector.bf16 6.939e-09 s (bf16 1.34e+14 FLOP/s); "
        "vector.fp32 5.877e-09 s (fp32 6.7e+13 FLOP/s)"))
    fp8_gemm = row("fp8", "H100_SXM", dtype="float32", peaks_fused=(
        "matrix 6.782e-08 s (fp8 1.979e+15 FLOP/s); vector.bf16 1.956e-09 s (bf16 1.34e+14 FLOP/s)"))
    ieee = row("gemm", "H100_SXM", dtype="float32", peaks_fused="vector.fp32 3.205e-05 s (fp32 6.7e+13 FLOP/s)")
    assert [work_dtypes(r) for r in (bf16_block, fp8_gemm, ieee)] == ["bf16+fp32", "fp8+bf16", "fp32"]
    assert work_dtypes(row("old", "H100_SXM", dtype="bfloat16", peaks_fused="")) == "bf16"  # no peaks: the dtype
