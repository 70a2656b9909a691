"""Cache-aware SOL: the minimum DRAM traffic over tilings and fused segments for a finite buffer.

An Orojenesis-style bound: per einsum, tile sizes and DRAM-loop orders (``mapping``, ``order_dp``)
enumerated into capacity-independent Pareto frontiers (``frontier``); fused runs of einsums whose
intermediates stay on chip (``segments``); a multiple-choice ILP in Pyomo, solved by GLPK, that
picks the segments and mappings at the hardware's buffer capacity (``ilp``); and the traffic
against capacity sweep (``skislope``). Entry point: ``cache_aware_traffic``.
"""
from solar_assets.bounds.cache_aware.errors import CacheAwareError
from solar_assets.bounds.cache_aware.mapping import TILE_MODES, Dim, Einsum, Role, TensorUse, tile_candidates
from solar_assets.bounds.cache_aware.outcome import (
    TILING_BOUND,
    CacheAwareOutcome,
    cache_aware_outcome,
    outcome_time_s,
)
from solar_assets.bounds.cache_aware.problem import (
    Problem,
    einsum_from_kernel,
    problem_from_graph,
    problem_from_kernels,
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
    "TensorUse", "cache_aware_bound", "cache_aware_traffic", "capacity_sweep", "default_solver",
    "einsum_from_kernel", "problem_from_graph", "problem_from_kernels", "ski_slope", "tile_candidates",
]
