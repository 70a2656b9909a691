"""A report row as JSON: no inf or NaN, each non-finite figure named. Its own module, without
matplotlib or pandas: a warm ``solar analyze`` digests its rows with it and writes no file."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence

from ir_schemas import ReportRow


def rows_as_json(rows: Sequence[ReportRow]) -> str:
    """The rows as a JSON array; ``allow_nan=False`` makes sure no ``Infinity`` or ``NaN`` slips through."""
    return json.dumps([finite_row(r) for r in rows], indent=2, allow_nan=False) + "\n"


def finite_row(row: ReportRow) -> dict:
    """The row as a JSON-ready dict with every non-finite float replaced by null, and each one named
    in ``nonfinite_note`` (``sol_fused_s was inf``): JSON has no inf or NaN, and a reader must not
    take a missing figure for a figure."""
    data = row.model_dump(mode="json")
    notes = []
    for key, value in data.items():
        if isinstance(value, float) and not math.isfinite(value):
            data[key] = None
            notes.append(f"{key} was {value}")
    if notes:
        data["nonfinite_note"] = "; ".join(filter(None, [data.get("nonfinite_note", ""), *notes]))
    return data
