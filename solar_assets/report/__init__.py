"""The report: one ``ReportRow`` per workload × hardware, as a table, files and a roofline plot.

Plain functions over ``ir_schemas.ReportRow``; the CLI, the bench and the ``headroom_report``
asset all go through them, so every place shows the same numbers.
"""
from solar_assets.report.headroom_table import audit_lines, format_headroom_table, plot_headroom
from solar_assets.report.projection import format_projection, plot_projection, projection_frame
from solar_assets.report.roofline_plot import plot_roofline
from solar_assets.report.rows import add_cache_aware, add_inverse, assemble_row, complete_row, report_row, rows_to_frame
from solar_assets.report.table import format_bytes, format_count, format_seconds, format_table
from solar_assets.report.writers import (
    REPORT_STEM,
    write_csv,
    write_json,
    write_markdown,
    report_pngs,
    write_report,
)

__all__ = [
    "audit_lines", "format_headroom_table", "format_projection", "plot_headroom", "plot_projection",
    "projection_frame", "report_pngs",
    "REPORT_STEM", "add_cache_aware", "add_inverse", "assemble_row", "complete_row", "format_bytes", "format_count", "format_seconds", "format_table",
    "plot_roofline", "report_row", "rows_to_frame", "write_csv", "write_json", "write_markdown",
    "write_report",
]
