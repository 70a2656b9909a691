"""Does a workload fit in the part's DRAM at its own size? The bounds do not depend on it (a SOL
bound is a floor on time, not a feasibility check), so a workload too large for the part is still
bounded, and its row says so in ``notes``.

The footprint counted is what any run must hold at once: the declared inputs, weights and
outputs (all live at the end of a call), plus the largest intermediate tensor the IR
materialises (an eager run holds it beside the inputs and weights). Reshape views own no
storage and are not counted. A fused schedule may avoid that intermediate, so the flag is a
warning about the workload as written, not a proof that no schedule fits.
"""
from __future__ import annotations

from typing import Any

def dram_footprint_bytes(graph: Any) -> tuple[int, int]:
    """(inputs + weights + outputs, largest intermediate) in bytes, from the graph's program at
    its own size (declared shapes and dtypes)."""
    from solar_assets.graph.einsum_graph import BYTES_PER_ELEMENT

    def nbytes(t: Any) -> int:
        n = 1
        for extent in t.shape:
            n *= int(extent)
        return n * BYTES_PER_ELEMENT[t.dtype]

    tensors = graph.program.tensor_map()
    intermediates = [nbytes(t) for t in tensors.values()
                     if t.role == "intermediate" and graph.storage_of.get(t.name, t.name) == t.name]
    return int(graph.io_bytes_declared), max(intermediates, default=0)


def dram_capacity_note(graph: Any, hardware: Any) -> str:
    """``exceeds DRAM capacity of <part> (<X GiB> > <Y GiB>)`` when the footprint is larger than
    ``hardware.dram_capacity_bytes``; '' when it fits."""
    io_bytes, intermediate = dram_footprint_bytes(graph)
    needed, capacity = io_bytes + intermediate, int(hardware.dram_capacity_bytes)
    if needed <= capacity:
        return ""
    from solar_assets.report.table import format_bytes

    return f"exceeds DRAM capacity of {hardware.name} ({format_bytes(needed)} > {format_bytes(capacity)})"
