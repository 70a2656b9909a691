"""The best modelled schedule (achievable) of a workload at one buffer capacity, memoised across
hardware and einsums. Its traffic is an upper bound on the optimum, not a lower bound: the
provable lower bound is ``lower_bound.provable_lower_bound``.

``cache_aware_traffic(graph, capacity_bytes)`` enumerates (once per workload structure) the
Pareto frontier of every einsum on its own and of every fused run, then selects segments and
mappings with the GLPK ILP at the capacity, then re-derives the chosen mappings' bytes in exact
integers. Frontiers do not depend on the capacity: hardware with the same buffer, repeated
identical einsums, and every point of a ski-slope sweep reuse them; a (workload, capacity)
result is memoised as a whole.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np


from solar_assets.bounds.cache_aware.candidates import CandidateTable
from solar_assets.bounds.cache_aware.errors import CacheAwareError
from solar_assets.bounds.cache_aware.frontier import MAX_TUPLES
from solar_assets.bounds.cache_aware.ilp import UNAFFECTED, Candidate, select_cover
from solar_assets.bounds.cache_aware.mapping import (
    TILE_MODES,
    Einsum,
    Role,
    TensorUse,
    fused_multiplier,
    mapping_cost,
    trips,
    use_counts,
)
from solar_assets.bounds.cache_aware.order_dp import best_order
from solar_assets.bounds.cache_aware.problem import Problem, problem_from_graph
from solar_assets.bounds.cache_aware.segments import (
    SegmentFrontier,
    SegmentPlan,
    plan_variants,
    region_counts,
    segment_frontier,
    split_for_fusion,
)
from solar_assets.graph.einsum_graph import BYTES_PER_ELEMENT

if TYPE_CHECKING:
    from solar_assets.bounds.sol import Bound, RooflineHardware
    from solar_assets.graph import EinsumGraph

logger = logging.getLogger(__name__)

CODE_VERSION = "2"
"""Bump when the mapping space or the accounting changes (Dagster code version of the bound)."""


@dataclass(frozen=True)
class Options:
    """Knobs of the mapping space and the solver (part of every memo key)."""

    tiles: str = "union"  # see mapping.TILE_MODES
    max_segment: int = 32  # longest fused run considered (1: no fusion)
    time_limit_s: float = 60.0  # GLPK time limit per selection
    max_tuples: int = MAX_TUPLES
    glpsol: str | None = None  # path to glpsol; None: PATH
    ilp_points: str = "best"  # per segment, the least-traffic fitting point ("best") or every one ("all")
    ilp_presolve_above: int = 4000  # more candidates than this: drop those no optimal cover uses

    def __post_init__(self):
        if self.tiles not in TILE_MODES:
            raise ValueError(f"tiles={self.tiles!r}: expected one of {', '.join(TILE_MODES)}")
        if self.max_segment < 1:
            raise ValueError("max_segment must be at least 1")
        if self.ilp_points not in ("best", "all"):
            raise ValueError(f"ilp_points={self.ilp_points!r}: expected 'best' or 'all'")


@dataclass(frozen=True)
class EinsumTraffic:
    """One einsum's share: its DRAM traffic under the chosen mapping, in exact bytes."""

    name: str
    bytes: int  # its operands and output through DRAM (an escaping on-chip output: written once)
    compulsory_bytes: int  # each operand and the output once: its unfused bytes
    buffer_bytes: int  # its own tiles plus the intermediates held while it runs
    tiles: dict[str, int]  # rank -> buffer tile (ranks split for fusion are named rank.0, rank.1, ...)
    order: tuple[str, ...]  # its own DRAM loops, outermost first (a segment's shared loops enclose them)
    segment: int  # index into CacheAwareResult.segments


@dataclass(frozen=True)
class SegmentTraffic:
    """One chosen segment: a single einsum, or a fused run with its shared tiles."""

    einsums: tuple[str, ...]
    bytes: int
    buffer_bytes: int
    shared_tiles: dict[str, int]  # the first member's fused ranks -> shared tile
    onchip: tuple[str, ...]  # intermediates kept in the buffer
    staged: tuple[str, ...] = ()  # DRAM inputs served from the buffer: staged (loaded once per
    # iteration for several members) or pinned (loaded once for the whole segment)


@dataclass(frozen=True)
class CacheAwareResult:
    """The least DRAM traffic of a modelled schedule of a workload with a buffer of ``capacity_bytes``
    (achievable: an upper bound on the optimum)."""

    bytes: int
    per_einsum: tuple[EinsumTraffic, ...]
    segments: tuple[SegmentTraffic, ...]
    proven_optimal: bool
    solve_seconds: float  # GLPK (incl. Pyomo's LP file round trip)
    build_seconds: float  # Pyomo model construction
    frontier_seconds: float  # enumeration, 0 when every frontier came from the memo
    capacity_bytes: int
    unfused_bytes: int  # Σ per einsum of each operand and output once (infinite buffer, no fusion)
    unfused_tiled_bytes: int | None  # every einsum on its own at this capacity (None: one does not fit alone)
    flops: int
    exact: bool  # every footprint counted exactly (else some were bounded from below)
    thinned: bool = False  # some einsum had too many tile tuples: its candidates were thinned
    workload: str = ""
    options: Options = field(default_factory=Options)
    variables: int = 0  # ILP binaries
    fallback: str | None = None  # no modelled schedule (repeat/cond/topk): the figure is the fused I/O

    @property
    def fusion_saving_bytes(self) -> int | None:
        """What fusion saves at this capacity over tiling every einsum on its own."""
        return None if self.unfused_tiled_bytes is None else self.unfused_tiled_bytes - self.bytes


@dataclass
class _Prepared:
    problem: Problem
    table: CandidateTable  # every candidate segment placed on its einsums; the n singles first
    runs: int  # fused candidates (plans of runs of two or more einsums)
    seconds: float
    exact: bool
    thinned: bool

    @property
    def singles(self) -> tuple[SegmentFrontier, ...]:
        return self.table.segments[:len(self.problem.einsums)]


class CacheAwareSolver:
    """Holds the memo: einsum frontiers by canonical key, workloads by structure, results by capacity."""

    def __init__(self, options: Options | None = None):
        self.options = options or Options()
        self._einsum_frontiers: dict = {}
        self._runs: dict = {}
        self._intern: dict = {}  # (run prefix id, next einsum's part) -> id: run keys in O(1) per step
        self._prepared: dict = {}
        self._results: dict = {}

    def clear(self) -> None:
        for memo in (self._einsum_frontiers, self._runs, self._intern, self._prepared, self._results):
            memo.clear()

    def derive(self, **changes: Any) -> CacheAwareSolver:
        """A solver with some options changed that shares this one's einsum enumerations (their
        memo key holds every option they depend on)."""
        other = CacheAwareSolver(replace(self.options, **changes))
        other._einsum_frontiers = self._einsum_frontiers
        return other

    def memo_sizes(self) -> dict[str, int]:
        """Entries per memo: distinct einsum enumerations, run structures, workloads, results."""
        return {"einsum_frontiers": len(self._einsum_frontiers), "runs": len(self._runs),
                "workloads": len(self._prepared), "results": len(self._results)}

    # ---------------------------------------------------------------------------- frontiers
    def prepare(self, problem: Problem) -> _Prepared:
        """Every candidate segment's frontier (capacity-independent), memoised by structure.

        A run is keyed by its structure alone (member digests, where each read comes from, which
        DRAM tensors members share, which outputs escape): a repeated block (the steps of an
        unrolled RNN, the layers of a transformer) is planned and enumerated once.
        """
        o = self.options
        key = (problem.key(), _names(problem), o.tiles, o.max_segment, o.max_tuples)
        if key in self._prepared:
            return self._prepared[key]
        start = time.perf_counter()
        n = len(problem.einsums)
        statics = [_run_static(problem, i) for i in range(n)]
        written = np.array(problem.written, dtype=bool)
        last_use = np.array([max(c, default=-1) for c in problem.consumers], dtype=np.int64)
        placed: list[tuple[SegmentFrontier, tuple[int, ...]]] = []
        used: dict[int, SegmentFrontier] = {}
        for lo in range(n):
            prefix = 0
            labels: dict[tuple, int] = {}
            split: list[Einsum] | None = None
            links: dict = {}
            for hi in range(lo, min(n, lo + o.max_segment)):
                part = _run_part(statics[hi], lo, labels)
                prefix = self._intern.setdefault((prefix, part), len(self._intern) + 1)
                skey = (prefix, (written[lo:hi + 1] | (last_use[lo:hi + 1] > hi)).tobytes())
                run = tuple(range(lo, hi + 1))
                if skey not in self._runs:
                    if split is None:
                        split = split_for_fusion(problem, run)
                        links.clear()
                    else:
                        split = split_for_fusion(problem, run, split)
                    self._runs[skey] = [segment_frontier(plan, o.tiles, self._einsum_frontiers, o.max_tuples)
                                        for plan in plan_variants(problem, run, o.tiles, split, links)]
                else:
                    split = None  # grown again from scratch if a longer run is new
                for sf in self._runs[skey]:
                    placed.append((sf, run))
                    used[id(sf)] = sf
        exact = all(sf.exact for sf in used.values())
        thinned = any(f.reduced for sf in used.values() for f in sf.member_frontiers)
        table = CandidateTable.build(placed, n)
        prepared = _Prepared(problem, table, len(placed) - n, time.perf_counter() - start, exact, thinned)
        self._prepared[key] = prepared
        return prepared

    # ---------------------------------------------------------------------------- one capacity
    def solve(self, problem: Problem, capacity_bytes: int) -> CacheAwareResult:
        capacity = int(capacity_bytes)
        if capacity <= 0:
            raise CacheAwareError(f"{problem.name}: buffer capacity must be positive, got {capacity_bytes!r}; "
                                  f"{UNAFFECTED}")
        o = self.options
        rkey = (problem.key(), _names(problem), capacity, o)
        if rkey in self._results:
            return self._results[rkey]
        prepared = self.prepare(problem)
        frontier_seconds = prepared.seconds
        prepared.seconds = 0.0  # charged once
        table = prepared.table
        candidates = table.candidates(capacity, o.ilp_points, o.ilp_presolve_above)
        names = [e.name for e in problem.einsums]
        _check_coverable(problem, prepared.singles, candidates, capacity)
        sel = select_cover(len(problem.einsums), candidates, capacity, time_limit_s=o.time_limit_s,
                           executable=o.glpsol, where=problem.name, names=names)
        per_einsum: dict[int, EinsumTraffic] = {}
        seg_out = []
        for c in sorted(sel.chosen, key=lambda c: c.members):
            seg_traffic = _realise(problem, table.segments[c.segment], c.members, c.point, len(seg_out), per_einsum)
            seg_out.append(seg_traffic)
        total = sum(t.bytes for t in seg_out)
        if not math.isclose(total, sel.objective, rel_tol=1e-9, abs_tol=1.0):
            raise CacheAwareError(f"{problem.name}: exact recount {total} B differs from the ILP objective "
                                  f"{sel.objective} B at {capacity} B (an internal inconsistency); {UNAFFECTED}")
        unfused_tiled = prepared.table.singles_cost(capacity)
        result = CacheAwareResult(
            bytes=total, per_einsum=tuple(per_einsum[i] for i in range(len(problem.einsums))),
            segments=tuple(seg_out), proven_optimal=sel.proven_optimal, solve_seconds=sel.solve_seconds,
            build_seconds=sel.build_seconds, frontier_seconds=frontier_seconds, capacity_bytes=capacity,
            unfused_bytes=problem.compulsory_bytes, unfused_tiled_bytes=unfused_tiled,
            flops=sum(e.flops for e in problem.einsums), exact=prepared.exact, thinned=prepared.thinned,
            workload=problem.name,
            options=o, variables=sel.variables)
        self._results[rkey] = result
        return result


def _run_static(problem: Problem, i: int) -> tuple:
    """What a run key needs of einsum i, computed once: its shape digest and, per read (and the
    accumulated-into output), the producer, the offsets between that write and this read (which
    decide whether their ranks line up) and the DRAM region (storage and subscript constants)."""
    e = problem.einsums[i]
    prod = problem.producer[i]

    def source(t: TensorUse) -> tuple:
        p = prod.get(t.tensor, -1)
        delta = ()
        if p >= 0:
            w = _offset(problem.einsums[p].out.accesses[0])
            delta = tuple(_offset(acc) - w for acc in t.accesses)
        return p, delta, (t.tensor, _constants(t))

    return (e.shape_digest, tuple(source(t) for t in e.reads), source(e.out) if e.keep else None,
            (e.out.tensor, _constants(e.out)))


def _run_part(static: tuple, lo: int, labels: dict[tuple, int]) -> tuple:
    """An einsum as a run starting at ``lo`` sees it, names left out: per read the member that
    produced it (and the offsets) or a label of the DRAM region (labels by first use in the run:
    equal labels, the same region); the same for its output."""
    digest, reads, keep, out = static

    def source(src: tuple) -> tuple:
        p, delta, region = src
        return ("m", p - lo, delta) if p >= lo else ("d", labels.setdefault(region, len(labels)))

    return (digest, tuple(source(r) for r in reads), source(keep) if keep else None,
            labels.setdefault(out, len(labels)))


def _offset(acc) -> int:
    """The constant part of an access's row-major offset into its storage."""
    off, stride = 0, 1
    for d in reversed(acc):
        off += d.const * stride
        stride *= d.size
    return off


def _constants(t: TensorUse) -> tuple:
    return tuple(tuple(d.const for d in acc) for acc in t.accesses)


def _names(problem: Problem) -> tuple[str, ...]:
    return (problem.name,) + tuple(e.name for e in problem.einsums)


def _check_coverable(problem: Problem, singles: Sequence[SegmentFrontier], candidates: Sequence[Candidate],
                     capacity: int) -> None:
    covered = {e for c in candidates for e in c.members}
    for i, e in enumerate(problem.einsums):
        if i not in covered:
            least = int(singles[i].need.min())
            raise CacheAwareError(
                f"{problem.name}: infeasible at a {capacity:,} B buffer: einsum {e.name!r} needs at least "
                f"{least:,} B for its smallest tiles; {UNAFFECTED}")


def exact_mapping(e: Einsum, role: Role, tiles: dict[str, int]) -> tuple[int, int, tuple[str, ...]]:
    """(buffer bytes, traffic bytes, order) of the best order for these tiles, in exact integers.

    Memoised by structure (an einsum's chosen mapping recurs across capacities and repeats)."""
    pos = e.rank_index
    key = (e.shape_digest, role.key(e), tuple(tiles[r] for r, _ in e.ranks))
    hit = _EXACT.get(key)
    if hit is None:
        fp, traffic, order = _exact_mapping(e, role, tiles)
        hit = _EXACT[key] = (fp, traffic, tuple(pos[r] for r in order))
        if len(_EXACT) > 1 << 16:
            _EXACT.clear()
    fp, traffic, order_pos = hit
    return fp, traffic, tuple(e.ranks[i][0] for i in order_pos)


_EXACT: dict = {}


def _exact_mapping(e: Einsum, role: Role, tiles: dict[str, int]) -> tuple[int, int, tuple[str, ...]]:
    extents = e.extents
    trip = {r: trips(n, tiles[r]) for r, n in extents.items()}
    indexed, weights = [], []
    for t in e.reads:
        if t.tensor not in role.onchip:
            _, S = use_counts(t, tiles, extents)
            indexed.append(t.ranks())
            weights.append(t.elem_bytes * S * fused_multiplier(role.fused, trip, t.ranks()))
    if not role.out_onchip:
        _, S = use_counts(e.out, tiles, extents)
        indexed.append(e.out.ranks())
        weights.append(2 * e.out.elem_bytes * S * fused_multiplier(role.fused, trip, e.out.ranks()))
    _, order = best_order({r: trip[r] for r in extents if r not in role.fused}, indexed, weights)
    fp, traffic = mapping_cost(e, tiles, order, role)
    return fp, traffic, order


def _realise(problem: Problem, sf: SegmentFrontier, members: tuple[int, ...], point: int, seg_index: int,
             per_einsum: dict[int, EinsumTraffic]) -> SegmentTraffic:
    """Exact bytes of one chosen (segment, point) placed on ``members`` (the plan may come from
    another run of the same structure), named after ``problem``'s einsums and tensors."""
    plan = sf.plan
    tau, threshold = int(sf.tau[point]), int(sf.need[point])
    shared = plan.tau_tiles(tau)
    seg_bytes = plan.escape_bytes
    staged_bytes: dict[int, int] = {}
    for x in plan.staged:
        _, moved, phi, _ = region_counts(plan, x.first, plan.einsums[x.first].read(x.storage))
        b = x.elem_bytes * max(int(moved[tau]), x.compulsory) * int(round(phi[tau]))
        staged_bytes[x.first] = staged_bytes.get(x.first, 0) + b
        seg_bytes += b
    for x in plan.pinned:
        b = x.elem_bytes * x.compulsory
        staged_bytes[0] = staged_bytes.get(0, 0) + b
        seg_bytes += b
    need = 0
    for k, (m, e, role) in enumerate(zip(members, plan.einsums, plan.roles)):
        f = sf.member_frontiers[k]
        held = int(sf.resident[k, tau])
        j = sf.member_choice(k, tau, threshold - held)
        tiles = f.tiles(int(f.tuple_id[j]), e)
        tiles.update(zip(role.fused, shared))
        fp, traffic, order = exact_mapping(e, role, tiles)
        escape = next((x.elem_bytes * x.compulsory for x in plan.intermediates if x.producer == k and x.escapes), 0)
        rename = _rank_names(plan, k, problem.einsums[m])
        per_einsum[m] = EinsumTraffic(problem.einsums[m].name, traffic + escape + staged_bytes.get(k, 0),
                                      e.compulsory_bytes, fp + held, {rename(r): t for r, t in tiles.items()},
                                      tuple(map(rename, order)), seg_index)
        seg_bytes += traffic
        need = max(need, fp + held)
    names = [problem.einsums[m].name for m in members]
    if need > threshold:
        raise CacheAwareError(f"segment {names}: exact buffer {need} B exceeds the frontier's {threshold} B "
                              f"(an internal inconsistency); {UNAFFECTED}")
    rename = _rank_names(plan, 0, problem.einsums[members[0]])
    onchip = tuple(problem.einsums[members[x.producer]].out.tensor for x in plan.intermediates)
    staged = tuple(problem.einsums[members[k]].reads[plan.einsums[k].read_index[x.storage]].tensor
                   for x in plan.staged + plan.pinned
                   for k in [next(k for k in range(x.first, x.last + 1) if x.storage in plan.einsums[k].read_index)])
    return SegmentTraffic(tuple(names), seg_bytes, need, {rename(r): t for r, t in zip(plan.roles[0].fused, shared)},
                          onchip, staged)


def _rank_names(plan: SegmentPlan, k: int, e: Einsum):
    """Rank names of a plan made for another run of the same structure, as ``e`` names them
    (split pieces keep their suffix: ``m.1``)."""
    mapping = dict(zip(plan.base_ranks[k], (r for r, _ in e.ranks)))

    def rename(rank: str) -> str:
        base, dot, rest = rank.partition(".")
        return mapping.get(base, base) + dot + rest

    return rename


# -------------------------------------------------------------------------------- public entry points
_DEFAULT_SOLVERS: dict[Options, CacheAwareSolver] = {}


def default_solver(options: Options | None = None) -> CacheAwareSolver:
    """The process-wide solver (and memo) for these options."""
    options = options or Options()
    if options not in _DEFAULT_SOLVERS:
        _DEFAULT_SOLVERS[options] = CacheAwareSolver(options)
    return _DEFAULT_SOLVERS[options]


def as_problem(subject: Any) -> Problem:
    """An EinsumGraph or a Problem, as a Problem (memoised per graph digest)."""
    if isinstance(subject, Problem):
        return subject
    if hasattr(subject, "nodes") and hasattr(subject, "program"):
        key = subject.digest()
        if key not in _PROBLEMS:
            _PROBLEMS[key] = problem_from_graph(subject)
        return _PROBLEMS[key]
    raise TypeError(f"cache_aware_traffic takes an EinsumGraph or a Problem, not {type(subject).__name__}")


_PROBLEMS: dict[str, Problem] = {}


def all_tensors_bytes(graph: EinsumGraph) -> int:
    """Bytes of every tensor the program declares (views counted as copies: an over-estimate)."""
    return sum(math.prod(t.shape) * BYTES_PER_ELEMENT[t.dtype] for t in graph.program.tensors)


def has_indirect(graph: EinsumGraph) -> bool:
    """Whether some kernel gathers or scatters through an index tensor."""
    return any(n.parsed is not None and n.parsed.indirect for n in graph.nodes)


def io_bytes_upper(graph: EinsumGraph) -> int:
    """``graph.io_bytes`` with each gathered (or scattered) graph tensor at the most elements its
    indirect accesses can touch (``footprint.indirect_footprint_upper``, summed, capped at the
    tensor): what a schedule that reads every graph tensor once moves whatever the index values."""
    from solar_assets.graph.footprint import indirect_footprint_upper

    tensors = graph.program.tensor_map()
    extra: dict[str, int] = {}
    for n in graph.nodes:
        pk = n.parsed
        if pk is None or not pk.indirect:
            continue
        for acc in (*pk.reads, pk.out):
            storage = graph.storage_of.get(acc.tensor, acc.tensor)
            if acc.is_indirect and storage in graph.io:
                hi = indirect_footprint_upper(acc, pk.extents, tuple(tensors[acc.tensor].shape)).elements
                extra[storage] = extra.get(storage, 0) + hi
    total = int(graph.io_bytes)
    for storage, hi in sorted(extra.items()):
        op = graph.io[storage]
        t = tensors[storage]
        elem = BYTES_PER_ELEMENT[t.dtype]
        total += (min(math.prod(t.shape), op.elements + hi) - op.elements) * elem
    return total


def unmodelled_reason(graph: EinsumGraph) -> str | None:
    """Why the mapping model cannot lift the graph (repeat bodies, topk, conds), or None."""
    kinds = []
    if any(n.repeats for n in graph.nodes):
        kinds.append("repeat")
    if graph.conds:
        kinds.append("cond")
    if any(n.kind == "topk" for n in graph.nodes):
        kinds.append("topk")
    if any(n.kind == "linalg" for n in graph.nodes):
        kinds.append("linalg")
    return "/".join(kinds) or None


def has_unmodelled_steps(graph: EinsumGraph) -> bool:
    """Whether the graph has repeat bodies, topk steps or conds, which the mapping model does not lift."""
    return unmodelled_reason(graph) is not None


def solve_subject(solver: CacheAwareSolver, subject: EinsumGraph | Problem, capacity_bytes: int) -> CacheAwareResult:
    """``solver.solve`` on a Problem or a graph: the least traffic of a modelled schedule (achievable).

    A graph whose every tensor fits the buffer at once gets the traffic of the schedule that
    reads each graph input and weight once and writes each output once (``io_bytes_upper``: a
    gathered tensor at the most rows its lookups can read), the exact optimum without gathers.
    A graph with repeat bodies, topk steps or conds has no modelled schedule: it gets the fused
    I/O traffic, marked ``fallback`` and not proven (it is a lower bound, not a schedule).
    Indirect accesses are spread (``problem.spread_indirect``): one row per lookup.
    """
    if isinstance(subject, Problem):
        return solver.solve(subject, capacity_bytes)
    capacity = int(capacity_bytes)
    if capacity <= 0:
        raise CacheAwareError(f"{subject.program.name}: buffer capacity must be positive, got "
                              f"{capacity_bytes!r}; {UNAFFECTED}")
    reason = unmodelled_reason(subject)
    fits = solver.options.max_segment > 1 and all_tensors_bytes(subject) <= capacity  # (1: fusion is off)
    if reason or fits:
        # Everything the program ever holds fits the buffer at once: some schedule reads each input
        # and weight once and writes each output once, so the fused traffic is the exact optimum
        # (the segment ILP, limited to runs of ``max_segment`` einsums, could only overshoot it).
        traffic = int(subject.io_bytes) if reason else io_bytes_upper(subject)
        return CacheAwareResult(
            bytes=traffic, per_einsum=(), segments=(), proven_optimal=not reason, solve_seconds=0.0,
            build_seconds=0.0, frontier_seconds=0.0, capacity_bytes=capacity,
            unfused_bytes=max(int(subject.bytes_unfused), traffic),
            unfused_tiled_bytes=None if reason else max(int(subject.bytes_unfused), traffic),
            flops=int(subject.flops), exact=not reason, workload=subject.program.name, options=solver.options,
            fallback=reason)
    return solver.solve(as_problem(subject), capacity_bytes)


def cache_aware_traffic(subject: EinsumGraph | Problem, capacity_bytes: int, *, tiles: str = "union",
                        max_segment: int = 32, time_limit_s: float = 60.0, glpsol: str | None = None,
                        solver: CacheAwareSolver | None = None) -> CacheAwareResult:
    """The least DRAM bytes of a modelled schedule of ``subject`` with an on-chip buffer of
    ``capacity_bytes`` (achievable: an upper bound on the optimum over every schedule).

    ``subject``: an ``EinsumGraph`` (or its ``Problem``, ``problem_from_graph``). The knobs
    are ``Options`` fields; a ``solver`` brings its own options (and memo) instead.
    Raises ``CacheAwareError`` when GLPK is missing, the model is infeasible (a buffer too small
    for any mapping) or the solver stops before proving optimality.
    """
    if solver is None:
        solver = default_solver(Options(tiles=tiles, max_segment=max_segment, time_limit_s=time_limit_s,
                                        glpsol=glpsol))
    return solve_subject(solver, subject, capacity_bytes)


def cache_aware_bound(graph: EinsumGraph, hw: RooflineHardware, result: CacheAwareResult | None = None,
                      dtype: str | None = None, **options: Any) -> Bound:
    """The best modelled schedule's time on ``hw``: max(ΣF/Π, B_cache_aware/β) with its limiter
    (achievable traffic: not a lower bound, never used to judge a measurement).

    With B_io ≤ B_ca this never beats the fused bound, and it is at most the unfused bound
    whenever B_ca ≤ Σ node bytes (see ``CacheAwareResult.unfused_bytes``).
    """
    from solar_assets.bounds.sol import Bound, hardware_label

    result = result or cache_aware_traffic(graph, int(hw.onchip_buffer_bytes), **options)
    dtype = dtype or graph.dtype
    peak, beta = float(hw.peak_for(dtype)), float(hw.dram_bytes_per_s)
    flops = int(graph.flops)
    compute_s, memory_s = flops / peak, result.bytes / beta
    intensity = flops / result.bytes if result.bytes else (math.inf if flops else 0.0)
    return Bound(mode="cache_aware", time_s=max(compute_s, memory_s), flops=flops, bytes=result.bytes,
                 limiter="compute" if compute_s > memory_s else "memory", intensity_flop_per_byte=intensity,
                 hardware=hardware_label(hw), proven_optimal=result.proven_optimal)
