"""The report's charts stay pictures a person reads: past a count of workloads they show the ones
with the longest fused bound and say so; the table keeps every row."""
from __future__ import annotations

from PIL import Image

from solar_assets.report.chart_rows import MAX_CHARTED_WORKLOADS, MAX_ROOFLINE_WORKLOADS, charted_rows
from solar_assets.report.projection import MAX_WIDTH_IN
from solar_assets.report.writers import write_report
from tests.test_table import row

PARTS = ("H100_SXM", "B200")


def _rows(n: int) -> list:
    # workload k's fused bound is k µs on one part, and half of that on the other
    return [row(f"w{k:03d}", hw, sol_fused_s=k * 1e-6 / (1 + i)) for k in range(1, n + 1) for i, hw in enumerate(PARTS)]


def test_a_few_workloads_are_all_charted_without_a_note():
    rows = _rows(MAX_ROOFLINE_WORKLOADS)
    assert charted_rows(rows, MAX_ROOFLINE_WORKLOADS) == (rows, None)


def test_many_workloads_chart_the_slowest_on_any_part_and_say_so():
    rows = _rows(100)
    drawn, note = charted_rows(rows)
    kept = {r.workload for r in drawn}
    assert kept == {f"w{k:03d}" for k in range(100 - MAX_CHARTED_WORKLOADS + 1, 101)}  # by hand: the largest k
    assert len(drawn) == 2 * MAX_CHARTED_WORKLOADS
    assert note == (f"the {MAX_CHARTED_WORKLOADS} of 100 workloads with the longest fused bound on any part; "
                    "every workload is in the report's table")


def test_the_report_of_many_workloads_keeps_every_row_and_a_readable_projection(tmp_path):
    rows = _rows(60)
    written = write_report(rows, tmp_path)
    assert len(written["csv"].read_text().strip().splitlines()) == 1 + len(rows)
    with Image.open(written["projection"]) as picture:
        assert picture.width <= MAX_WIDTH_IN * 100  # dpi 100
    with Image.open(written["roofline"]) as picture:
        assert picture.width <= 3 * 6.4 * 100
