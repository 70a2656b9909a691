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


ALL_TILES_BUDGET_S = 30.0
"""Seconds the every-trip-count candidate set (``tiles="all"``) may take, estimated from the
default set's time, before the default set's figure stands alone."""


@dataclass(frozen=True)
class CacheAwareOutcome:
    """A bracket on the least DRAM traffic of the program at its hardware's on-chip storage.

    ``lb_bytes`` is the **provable lower bound** (every schedule, with ``lb_capacity_bytes`` of
    on-chip storage: L2, shared memory and registers; ``lower_bound``); ``bytes`` the **best
    modelled schedule (achievable)** with a buffer of ``capacity_bytes`` (the L2): an upper bound
    on the optimum. Only the first may judge a measurement.
    """

    capacity_bytes: int
    bytes: int | None = None  # best modelled schedule (achievable), fusion and tiling chosen together
    unfused_tiled_bytes: int | None = None  # every einsum tiled on its own (None: one does not fit alone)
    unfused_bytes: int | None = None  # every einsum's operands and output once (infinite buffer)
    fused_bytes: int | None = None  # graph inputs, weights and outputs once (infinite buffer)
    proven_optimal: bool = False
    segments: int = 0
    einsums: int = 0
    solve_seconds: float = 0.0
    error: str | None = None
    lb_bytes: int | None = None  # provable lower bound for every schedule
    lb_capacity_bytes: int | None = None  # the on-chip storage the provable bound assumes
    lb_source: str = ""  # "compulsory" or "pebble:<einsum>"
    tiles: str = ""  # the candidate set behind ``bytes``: "all", or "union" (and why); "" when no search ran
    fallback: str | None = None  # no modelled schedule (repeat/cond/topk): ``bytes`` is the fused I/O
    indirect: bool = False  # gathers/scatters: the figures depend on the index values

    @property
    def ok(self) -> bool:
        return self.error is None and self.bytes is not None

    @property
    def tiling_bound(self) -> bool:
        return self.ok and self.unfused_bytes is not None and self.bytes > self.unfused_bytes

    def note(self) -> str:
        """One line for the report, saying what ran: empty when nothing needs saying."""
        parts = []
        if self.error:
            parts.append(f"no achievable cache-aware figure: {self.error}")
        if self.fallback:
            parts.append(f"fell back to fused: the mapping model does not lift {self.fallback} steps, so "
                         "no schedule was modelled (bytes_cache_aware is the fused I/O, not proven)")
        if self.tiling_bound and not self.fallback:
            parts.append(f"{TILING_BOUND}: a {self.capacity_bytes} B buffer forces {self.bytes - self.unfused_bytes} B "
                         "of re-reads beyond every einsum's operands once")
        if self.segments and self.segments < self.einsums:
            parts.append(f"fused: {self.einsums} einsums in {self.segments} segments")
        if self.ok and not self.proven_optimal and not self.fallback:
            parts.append("not proven optimal")
        if self.indirect:
            parts.append("gathers: traffic depends on the index values (lower bound at the fewest rows any "
                         "indices read, achievable at one row per lookup)")
        if self.lb_source.startswith("pebble:"):
            parts.append(f"lower bound set by {self.lb_source.removeprefix('pebble:')}'s pebble bound")
        if self.tiles and self.tiles != "all" and self.ok and not self.fallback and self.einsums:
            parts.append(f"tiles: {self.tiles}")
        return "; ".join(parts)

    def ordering_faults(self) -> list[str]:
        """Breaches of fused ≤ lower bound ≤ achievable ≤ unfused-tiled traffic (an internal error if any)."""
        faults = []
        if self.lb_bytes is not None and self.fused_bytes is not None and self.lb_bytes < self.fused_bytes:
            faults.append(f"cache-aware lower bound {self.lb_bytes} B < fused {self.fused_bytes} B")
        if not self.ok:
            return faults
        if self.fused_bytes is not None and self.bytes < self.fused_bytes:
            faults.append(f"cache-aware {self.bytes} B < fused {self.fused_bytes} B")
        if self.lb_bytes is not None and self.bytes < self.lb_bytes:
            faults.append(f"cache-aware (achievable) {self.bytes} B < its provable lower bound {self.lb_bytes} B")
        if self.unfused_tiled_bytes is not None and self.bytes > self.unfused_tiled_bytes:
            faults.append(f"cache-aware {self.bytes} B > unfused-tiled {self.unfused_tiled_bytes} B")
        return faults

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CacheAwareOutcome:
        return cls(**json.loads(text))


def cache_aware_outcome(graph: Any, capacity_bytes: int, lb_capacity_bytes: int | None = None,
                        all_tiles_budget_s: float = ALL_TILES_BUDGET_S, **options: Any) -> CacheAwareOutcome:
    """The bracket at ``capacity_bytes`` (the modelled buffer) and ``lb_capacity_bytes`` (the whole
    on-chip storage, for the provable bound; default the same); ``options`` as for
    ``cache_aware_traffic``. Never raises a ``CacheAwareError``: it becomes the outcome's ``error``
    (the provable bound still stands).

    The achievable figure is searched with the default candidate set and, when the estimated time
    of every trip count (``tiles="all"``) fits ``all_tiles_budget_s``, with that too; the lower of
    the two is kept (both are schedules) and ``tiles`` says which set ran.
    """
    from solar_assets.bounds.cache_aware.lower_bound import provable_lower_bound
    from solar_assets.bounds.cache_aware.solve import cache_aware_traffic, has_indirect

    capacity = int(capacity_bytes)
    fused = int(getattr(graph, "io_bytes", 0)) or None
    lb = None
    if hasattr(graph, "program"):
        lb = provable_lower_bound(graph, int(lb_capacity_bytes or capacity))
    bracket = dict(lb_bytes=lb.bytes if lb else None, lb_capacity_bytes=lb.capacity_bytes if lb else None,
                   lb_source=lb.source if lb else "", indirect=bool(hasattr(graph, "nodes") and has_indirect(graph)))
    tiles = options.pop("tiles", None)
    try:
        r = cache_aware_traffic(graph, capacity, tiles=tiles or "union", **options)
        chosen = (tiles or "union") if r.per_einsum else ""  # "": no tiling search ran (all fits, or a fallback)
        if tiles is None and r.per_einsum:
            estimate = _all_tiles_seconds(graph, int(options.get("max_segment", 32)))
            if estimate <= all_tiles_budget_s:
                r_all = cache_aware_traffic(graph, capacity, tiles="all", **options)
                chosen = "all"
                r = r_all if r_all.bytes <= r.bytes else r
            else:
                chosen = f"union (every trip count estimated at {estimate:.0f} s > {all_tiles_budget_s:.0f} s)"
    except CacheAwareError as e:
        return CacheAwareOutcome(capacity_bytes=capacity, fused_bytes=fused, error=str(e), **bracket)
    return CacheAwareOutcome(
        capacity_bytes=capacity, bytes=int(r.bytes), unfused_tiled_bytes=r.unfused_tiled_bytes,
        unfused_bytes=int(r.unfused_bytes), fused_bytes=fused, proven_optimal=bool(r.proven_optimal),
        segments=len(r.segments), einsums=len(r.per_einsum), solve_seconds=float(r.solve_seconds),
        tiles=chosen, fallback=r.fallback, **bracket)


SECONDS_PER_TUPLE = 3e-7
"""Enumeration time of one tile tuple (measured: GEMM 8192³, 2M tuples of every trip count in 0.2 s
on a 2-core machine, rounded up)."""


def _all_tiles_seconds(graph: Any, max_segment: int = 32) -> float:
    """Estimated time of the every-trip-count search: its tile tuples (capped where the enumeration
    thins them), each einsum counted once per fused run it may sit in."""
    from solar_assets.bounds.cache_aware.frontier import MAX_TUPLES
    from solar_assets.bounds.cache_aware.mapping import tile_candidates
    from solar_assets.bounds.cache_aware.solve import as_problem

    einsums = as_problem(graph).einsums
    runs = min(len(einsums), max_segment)
    tuples = sum(min(math.prod(len(tile_candidates(n, "all")) for _, n in e.ranks), MAX_TUPLES) for e in einsums)
    return SECONDS_PER_TUPLE * tuples * runs


def outcome_time_s(outcome: CacheAwareOutcome, flops: int, peak_flop_per_s: float,
                   dram_bytes_per_s: float, lower: bool = False) -> tuple[float, str] | None:
    """max(F/Π, B/β) and its limiter, B the achievable traffic (``lower``: the provable lower
    bound); None without that figure."""
    traffic = outcome.lb_bytes if lower else (outcome.bytes if outcome.ok else None)
    if traffic is None:
        return None
    compute_s, memory_s = flops / peak_flop_per_s, traffic / dram_bytes_per_s
    if math.isnan(compute_s) or math.isnan(memory_s):
        return None
    return max(compute_s, memory_s), ("compute" if compute_s > memory_s else "memory")
