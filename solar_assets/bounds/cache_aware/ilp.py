"""The selection ILP: one binary per (segment, frontier point), built in Pyomo, solved by GLPK.

Variables y[s, k] ∈ {0, 1} for every candidate segment s (a single einsum, or a fused run) and
every point k of its frontier whose buffer need fits the capacity (filtered beforehand in exact
integers: GLPK's tolerances would let a point a few bytes over through). Rows:

* cover: every einsum lies in exactly one chosen segment, Σ_{s ∋ e} Σ_k y[s, k] = 1 (this both
  picks one mapping per segment and draws the segment boundaries: an interval cover);

minimising Σ traffic[s, k]·y[s, k]. The capacity is not a row: every candidate's need was
compared with C beforehand, exactly (a row Σ need·y ≤ C would hold for any selection anyway,
and writing it doubled the model on large graphs). The model is built in a sorted, fixed order. Only a proven
``optimal`` termination is accepted: at a time limit GLPK reports ``feasible`` for its
incumbent, and an unproven selection overstates traffic, so it is no bound.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from solar_assets.bounds.cache_aware.errors import CacheAwareError
from solar_assets.stage_clock import timed

logger = logging.getLogger(__name__)

UNAFFECTED = "the unfused and fused bounds are unaffected"


@dataclass(frozen=True)
class Candidate:
    """One selectable mapping: point ``point`` of segment ``segment``, covering ``members``."""

    segment: int
    point: int
    members: tuple[int, ...]
    need: int
    traffic: float


@dataclass(frozen=True)
class Selection:
    chosen: tuple[Candidate, ...]
    objective: float
    proven_optimal: bool
    build_seconds: float
    solve_seconds: float
    variables: int


def glpk_solver(executable: str | None = None):
    """The Pyomo GLPK plugin (``glpsol``), or CacheAwareError naming what is missing."""
    solver = _available_glpk(executable)
    if solver is None:
        where = executable or "glpsol on PATH"
        raise CacheAwareError(f"the cache-aware bound needs GLPK's solver, but {where} was not found "
                              f"(install glpk-utils, e.g. apt-get install glpk-utils); {UNAFFECTED}")
    return solver


_GLPK: dict[str | None, object] = {}


def _available_glpk(executable: str | None):
    """The plugin once per executable and process: asking whether it is available runs
    ``glpsol --version`` (a process start per solve otherwise); a missing one (None) is asked
    again next time, as glpsol may be installed meanwhile."""
    if executable in _GLPK:
        return _GLPK[executable]
    try:
        import pyomo.environ as pe
    except ImportError as e:  # pragma: no cover - pyomo is a dependency
        raise CacheAwareError(f"the cache-aware bound needs pyomo ({e}); {UNAFFECTED}") from None
    kwargs = {"executable": executable} if executable else {}
    solver = pe.SolverFactory("glpk", **kwargs)
    if not solver.available(exception_flag=False):
        return None
    _GLPK[executable] = solver
    return solver


def select_cover(n_einsums: int, candidates: Sequence[Candidate], capacity_bytes: int, *,
                 time_limit_s: float = 60.0, executable: str | None = None, where: str = "workload",
                 names: Sequence[str] | None = None) -> Selection:
    """Pick segments covering every einsum once and one mapping each, minimising DRAM traffic."""
    import pyomo.environ as pe
    from pyomo.common.errors import ApplicationError

    solver = glpk_solver(executable)
    names = list(names) if names is not None else [f"#{i}" for i in range(n_einsums)]
    start = time.perf_counter()
    if any(c.need > capacity_bytes for c in candidates):
        raise ValueError("select_cover: candidates must be filtered by capacity (exact integers) first")
    cands = sorted(candidates, key=lambda c: (c.members, c.segment, c.point))
    by_einsum: list[list[int]] = [[] for _ in range(n_einsums)]
    for i, c in enumerate(cands):
        for e in c.members:
            by_einsum[e].append(i)
    if all(len(b) == 1 for b in by_einsum) and all(c.members for c in cands):
        # the reductions left one candidate per einsum: each must be chosen, so this partition is
        # the only cover and its traffic the optimum, without a model (most solves of small graphs)
        return Selection(tuple(cands), sum(c.traffic for c in cands), True, time.perf_counter() - start, 0.0,
                         len(cands))
    m = pe.ConcreteModel(name=f"cache_aware[{where}]")
    m.y = pe.Var(range(len(cands)), domain=pe.Binary)
    m.cover = pe.Constraint(range(n_einsums),
                            rule=lambda m, e: pe.quicksum(m.y[i] for i in by_einsum[e]) == 1
                            if by_einsum[e] else pe.Constraint.Infeasible)
    m.traffic = pe.Objective(expr=pe.quicksum(cands[i].traffic * m.y[i] for i in range(len(cands))),
                             sense=pe.minimize)
    built = time.perf_counter()
    try:  # glpsol takes whole seconds
        with timed("glpsol"):
            results = solver.solve(m, load_solutions=False, timelimit=max(1, math.ceil(time_limit_s)))
    except ApplicationError as e:
        raise CacheAwareError(f"{where} at a {capacity_bytes:,} B buffer: glpsol failed ({e}); "
                              f"{UNAFFECTED}") from None
    solved = time.perf_counter()
    check_termination(results, where, capacity_bytes, time_limit_s)
    m.solutions.load_from(results)
    chosen = tuple(cands[i] for i in range(len(cands)) if pe.value(m.y[i]) > 0.5)
    covered = sorted(e for c in chosen for e in c.members)
    if covered != list(range(n_einsums)):
        missing = sorted(set(range(n_einsums)) - set(covered))
        raise CacheAwareError(f"{where}: GLPK returned a selection that does not cover "
                              f"{[names[i] for i in missing]} exactly once at {capacity_bytes} B; {UNAFFECTED}")
    return Selection(chosen, sum(c.traffic for c in chosen), True, built - start, solved - built, len(cands))


def check_termination(results, where: str, capacity_bytes: int, time_limit_s: float) -> None:
    """Accept only a proven optimum; name the workload, the capacity and what went wrong."""
    from pyomo.opt import TerminationCondition as TC

    tc = results.solver.termination_condition
    if tc == TC.optimal:
        return
    at = f"{where} at a {capacity_bytes:,} B buffer"
    if tc in (TC.maxTimeLimit, TC.feasible):
        raise CacheAwareError(f"{at}: GLPK hit its {time_limit_s:g} s time limit before proving optimality "
                              f"(status {tc}); an unproven mapping overstates traffic and is no bound. "
                              f"Raise the time limit; {UNAFFECTED}")
    if tc in (TC.infeasible, TC.infeasibleOrUnbounded):
        raise CacheAwareError(f"{at}: the selection model is infeasible; {UNAFFECTED}")
    raise CacheAwareError(f"{at}: GLPK stopped with status {tc}; {UNAFFECTED}")
