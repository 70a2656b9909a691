"""Cache-aware traffic as a bracket: a provable lower bound and the best modelled schedule.

``lower_bound``: the **provable lower bound** for every schedule with all the part's on-chip
storage (compulsory traffic and single-contraction red-blue-pebble bounds; the argument is in
docs/cache_aware_bound.md). The rest: the **best modelled schedule (achievable)**, an
Orojenesis-style search, an upper bound on the optimum: per einsum, tile sizes and DRAM-loop orders (``mapping``, ``order_dp``)
enumerated into capacity-independent Pareto frontiers (``frontier``); fused runs of einsums whose
intermediates stay on chip (``segments``); a multiple-choice ILP in Pyomo, solved by GLPK, that
picks the segments and mappings at the hardware's buffer capacity (``ilp``); and the traffic
against capacity sweep (``skislope``). Entry point: ``cache_aware_traffic``.
"""
from solar_assets.bounds.cache_aware.errors import CacheAwareError
from solar_assets.bounds.cache_aware.lower_bound import PebbleBound, ProvableLowerBound, provable_lower_bound
from solar_assets.bounds.cache_aware.mapping import TILE_MODES, Einsum, Role, TensorUse, tile_candidates
from solar_assets.ir.expr import Dim  # re-exported: the subscript type the mapping tiles
from solar_assets.bounds.cache_aware.outcome import (
    TILING_BOUND,
    CacheAwareOutcome,
    cache_aware_outcome,
    outcome_time_s,
)
from solar_assets.bounds.cache_aware.problem import (
    Problem,
    einsum_from_node,
    problem_from_graph,
)
from solar_assets.bounds.cache_aware.skislope import SkiSlope, SkiSlopeRow, capacity_sweep, ski_slope
from solar_assets.bounds.cache_aware.solve import (
    CODE_VERSION,
    CacheAwareResult,
    CacheAwareSolver,
    EinsumTraffic,
    Options,
    SegmentTraffic,
    cache_aware_bound,
    cache_aware_traffic,
    default_solver,
)

__all__ = [
    "CODE_VERSION", "TILING_BOUND", "CacheAwareError", "CacheAwareOutcome", "cache_aware_outcome", "outcome_time_s", "CacheAwareResult", "CacheAwareSolver", "Dim", "Einsum",
    "EinsumTraffic", "Options", "Problem", "Role", "SegmentTraffic", "SkiSlope", "SkiSlopeRow", "TILE_MODES",
    "TensorUse", "PebbleBound", "ProvableLowerBound", "provable_lower_bound", "cache_aware_bound", "cache_aware_traffic", "capacity_sweep", "default_solver",
    "einsum_from_node", "problem_from_graph", "ski_slope", "tile_candidates",
]
