"""The report: one ``ReportRow`` per workload × hardware, as a table, files and a roofline plot.

Plain functions over ``ir_schemas.ReportRow``; the CLI, the bench and the ``headroom_report``
asset all go through them, so every place shows the same numbers.

The names below are loaded from their modules when first used (PEP 562): importing the text
table (``report.table``, what a warm ``solar analyze`` prints) does not import matplotlib and
pandas (0.7 s of a 2.7 s warm call).
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "headroom_table": ("audit_lines", "format_headroom_table", "plot_headroom"),
    "projection": ("format_projection", "plot_projection", "projection_frame"),
    "roofline_plot": ("plot_roofline",),
    "rows": ("add_cache_aware", "add_inverse", "assemble_row", "complete_row", "report_row", "rows_to_frame"),
    "table": ("format_bytes", "format_count", "format_seconds", "format_table"),
    "writers": ("REPORT_STEM", "write_csv", "write_json", "write_markdown", "report_pngs", "write_report"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
