"""What a report row says about library steps: their FLOPs are a standard operation count.

A factorisation, solve, decomposition or FFT (the IR's ``Linalg`` step, ``ir.linalg``) is not a loop
nest whose multiply-adds can be counted; its FLOPs are the routine's standard count (LAPACK Working
Note 41, Golub & Van Loan, 5·N·log₂N for an FFT): the count of the standard algorithm, which
another one may undercut. The row names each routine with its formula, as ``ir_schemas/REPORT.md``
lists them with their sources.
"""
from __future__ import annotations

import re
from typing import Any


def library_counts_note(graph: Any) -> str:
    """``flops: LAPACK count (cholesky n³/3 + n²/2 + n/6; cholesky_solve 2n²k)`` (and ``flops: FFT
    count (…)`` for FFTs, ``shapes from the sample's values (nonzero 62)`` for selections whose
    length the values decided), or ''."""
    from solar_assets.ir.linalg import DATA_SHAPED, ROUTINES

    routines: list[str] = []
    for node in graph.nodes:
        if node.kind != "linalg":
            continue
        routine = node.text.split("= linalg.", 1)[-1].split("(", 1)[0]
        if routine in ROUTINES and routine not in routines:
            routines.append(routine)
    notes = []
    shaped = [(r, m.group(1)) for node in graph.nodes if node.kind == "linalg"
              for r in [node.text.split("= linalg.", 1)[-1].split("(", 1)[0]] if r in DATA_SHAPED
              for m in [re.search(r"count=(\d+)", node.text)] if m]
    if shaped:
        notes.append("shapes from the sample's values (" + ", ".join(f"{r} {n}" for r, n in shaped) + ")")
    routines = [r for r in routines if r not in DATA_SHAPED and r != "masked_scatter"]
    for label, chosen in (("LAPACK count", [r for r in routines if not r.startswith("fft_")]),
                          ("FFT count", [r for r in routines if r.startswith("fft_")])):
        if chosen:
            notes.append(f"flops: {label} ({'; '.join(f'{r} {ROUTINES[r].formula}' for r in chosen)})")
    return "; ".join(notes)
