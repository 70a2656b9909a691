"""The cache-aware result as the report needs it: plain numbers, a verdict, or the reason it is missing.

``CacheAwareResult`` carries per-einsum mappings for audits; the report, the Dagster assets
and the on-disk cache only need the totals. A failed solve (glpsol missing, an infeasible
buffer, a time limit) becomes an outcome with ``error`` set, so the unfused and fused modes
still land and the row says why the third one is absent.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from solar_assets.bounds.cache_aware.errors import CacheAwareError

TILING_BOUND = "tiling-bound"
"""The buffer is too small for even one einsum to read its operands only once: the cache-aware
traffic exceeds the unfused (infinite-buffer) traffic, so tiling, not fusion, is the bottleneck."""


@dataclass(frozen=True)
class CacheAwareOutcome:
    capacity_bytes: int
    bytes: int | None = None  # minimum DRAM traffic with fusion and tiling chosen together
    unfused_tiled_bytes: int | None = None  # every einsum tiled on its own (None: one does not fit alone)
    unfused_bytes: int | None = None  # every einsum's operands and output once (infinite buffer)
    fused_bytes: int | None = None  # graph inputs, weights and outputs once (infinite buffer)
    proven_optimal: bool = False
    segments: int = 0
    einsums: int = 0
    solve_seconds: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.bytes is not None

    @property
    def tiling_bound(self) -> bool:
        return self.ok and self.unfused_bytes is not None and self.bytes > self.unfused_bytes

    def note(self) -> str:
        """One line for the report: empty when nothing needs saying."""
        if self.error:
            return f"no cache-aware bound: {self.error}"
        parts = []
        if self.tiling_bound:
            parts.append(f"{TILING_BOUND}: a {self.capacity_bytes} B buffer forces {self.bytes - self.unfused_bytes} B "
                         "of re-reads beyond every einsum's operands once")
        if self.segments and self.segments < self.einsums:
            parts.append(f"fused: {self.einsums} einsums in {self.segments} segments")
        if not self.proven_optimal:
            parts.append("not proven optimal")
        return "; ".join(parts)

    def ordering_faults(self) -> list[str]:
        """Breaches of fused ≤ cache-aware ≤ unfused-tiled traffic (an internal error if any)."""
        if not self.ok:
            return []
        faults = []
        if self.fused_bytes is not None and self.bytes < self.fused_bytes:
            faults.append(f"cache-aware {self.bytes} B < fused {self.fused_bytes} B")
        if self.unfused_tiled_bytes is not None and self.bytes > self.unfused_tiled_bytes:
            faults.append(f"cache-aware {self.bytes} B > unfused-tiled {self.unfused_tiled_bytes} B")
        return faults

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CacheAwareOutcome:
        return cls(**json.loads(text))


def cache_aware_outcome(graph: Any, capacity_bytes: int, **options: Any) -> CacheAwareOutcome:
    """Solve at ``capacity_bytes`` (``options`` as for ``cache_aware_traffic``); never raises a
    ``CacheAwareError``: it becomes the outcome's ``error``."""
    from solar_assets.bounds.cache_aware.solve import cache_aware_traffic

    fused = int(getattr(graph, "io_bytes", 0)) or None
    try:
        r = cache_aware_traffic(graph, int(capacity_bytes), **options)
    except CacheAwareError as e:
        return CacheAwareOutcome(capacity_bytes=int(capacity_bytes), fused_bytes=fused, error=str(e))
    return CacheAwareOutcome(
        capacity_bytes=int(capacity_bytes), bytes=int(r.bytes), unfused_tiled_bytes=r.unfused_tiled_bytes,
        unfused_bytes=int(r.unfused_bytes), fused_bytes=fused, proven_optimal=bool(r.proven_optimal),
        segments=len(r.segments), einsums=len(r.per_einsum), solve_seconds=float(r.solve_seconds))


def outcome_time_s(outcome: CacheAwareOutcome, flops: int, peak_flop_per_s: float,
                   dram_bytes_per_s: float) -> tuple[float, str] | None:
    """max(F/Π, B_cache_aware/β) and its limiter; None without a cache-aware traffic figure."""
    if not outcome.ok:
        return None
    compute_s, memory_s = flops / peak_flop_per_s, outcome.bytes / dram_bytes_per_s
    if math.isnan(compute_s) or math.isnan(memory_s):
        return None
    return max(compute_s, memory_s), ("compute" if compute_s > memory_s else "memory")
