"""Roofline bounds of an einsum graph, and the inverse question: what hardware meets a latency.

Each node runs on its own unit at its own peak (``solar_assets.bounds.units``: contractions on
the matrix peak of their operand dtype, the fp32-math policy deciding TF32 or IEEE for fp32;
everything else on the vector peak of its dtype). Units run concurrently, so a program's compute
time is its **busiest unit's** time, ``T_c = max_u Σ_{n on u} F_n / Π_n`` (the tensor cores are one
unit across dtypes; vector pipes one per dtype), never a sum across units and never one peak for
all. With DRAM bandwidth β:

* ``unfused``: one DRAM round trip per framework op (what eager runs): nodes are grouped by their
  origin op (``origin.node``; a node without one is its own group), a group's bytes are the
  tensors crossing its boundary once each (read from outside; written and consumed outside, or a
  graph output), and the bound is Σ_g max(T_c(g), B_g/β). Its limiter compares the summed
  demands. ``SolBounds.per_op`` keeps each group's figures.
* ``unfused_kernel``: the same per IR kernel, Σ_n max(F_n/Π_n, B_n/β) (``per_node``).
* ``unfused_graph``: the whole-graph form of the per-op traffic, max(T_c, ΣB_g/β).
* ``fused``: intermediates stay on chip, max(T_c, B_io/β) with B_io the graph inputs, weights
  and outputs once each.

fused ≤ unfused_graph ≤ unfused ≤ unfused_kernel holds by construction (a group's boundary
bytes are at most its nodes' bytes). ``peak_flop_per_s`` is the program's effective peak,
ΣF / T_c (the busiest unit's peak when one unit does all the work), so that ΣF/peak reproduces
T_c for the inverse roofline and the cache-aware bound. A limiter is ``compute`` when the
compute time is strictly larger, otherwise ``memory`` (a tie, including a graph that does no
work, reads as memory). Intensity is FLOP per DRAM byte (inf when a bound moves no bytes but
computes, 0 when it does neither). Nothing is clamped: a non-positive peak, bandwidth or target
latency is an error, not a floor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from solar_assets.bounds.units import Fp32Math, NodeUnit, node_unit
from solar_assets.errors import SolarError

if TYPE_CHECKING:
    from solar_assets.graph import EinsumGraph

CODE_VERSION = "2"
"""Bump when a formula changes: the Dagster code version of ``sol_bounds`` / ``inverse_roofline``."""

Mode = Literal["unfused", "fused", "unfused_graph", "unfused_kernel", "cache_aware"]
Limiter = Literal["compute", "memory"]


class BoundsError(SolarError, ValueError):
    """Bounds that cannot be computed (a non-positive peak, bandwidth or target latency)."""


class RooflineHardware(Protocol):
    """What a bound needs of a hardware spec (``solar_assets.hardware.HardwareSpec`` fits)."""

    name: str
    dram_bytes_per_s: float

    def peak_for(self, dtype: str) -> float: ...

    def digest(self) -> str: ...


@dataclass(frozen=True)
class Bound:
    """One speed-of-light bound, with what limits it and where it came from."""

    mode: Mode
    time_s: float
    flops: int
    bytes: int
    limiter: Limiter
    intensity_flop_per_byte: float
    hardware: str  # "<spec name>@<spec digest>"
    proven_optimal: bool = True  # False only for a solver bound that stopped short of optimality


@dataclass(frozen=True)
class NodeBound:
    """One node's roofline time when it runs on its own, on its own unit."""

    name: str
    time_s: float
    compute_s: float
    memory_s: float
    limiter: Limiter
    unit: str = ""  # "matrix.tf32", "vector.fp32", … ("" for a node that does no arithmetic)
    peak_flop_per_s: float | None = None
    group: str = ""  # the framework op it was lowered from (``origin.node``), else its own name


@dataclass(frozen=True)
class UnitTime:
    """One concurrent unit's work: ``key`` ``matrix`` or ``vector.<dtype>``, its FLOPs, its busy
    time Σ F/Π and the peak of each dtype it ran at."""

    key: str
    flops: int
    time_s: float
    peaks: tuple[tuple[str, float], ...]  # (dtype, FLOP/s) in first-use order

    def describe(self) -> str:
        peaks = ", ".join(f"{d} {p:.4g} FLOP/s" for d, p in self.peaks)
        return f"{self.key} {self.time_s:.4g} s ({peaks})"


@dataclass(frozen=True)
class OpBound:
    """One framework op's nodes run as one kernel: boundary bytes once, busiest unit's time."""

    name: str
    nodes: tuple[str, ...]
    flops: int
    bytes: int
    time_s: float
    compute_s: float
    memory_s: float
    limiter: Limiter


@dataclass(frozen=True)
class SolBounds:
    """The roofline bounds of one graph on one hardware spec."""

    unfused: Bound
    fused: Bound
    unfused_graph: Bound
    hardware: str
    dtype: str
    peak_flop_per_s: float  # effective: ΣF / compute time of the busiest unit
    dram_bytes_per_s: float
    per_node: tuple[NodeBound, ...] = ()
    unfused_kernel: Bound | None = None
    per_op: tuple[OpBound, ...] = ()
    units: tuple[UnitTime, ...] = ()  # busiest first
    fp32_math: str = "auto"

    @property
    def bounds(self) -> tuple[Bound, ...]:
        return (self.fused, self.unfused_graph, self.unfused)

    @property
    def compute_s(self) -> float:
        """The busiest unit's time: the compute time of fused, whole-graph unfused and cache-aware."""
        return self.units[0].time_s if self.units else 0.0

    @property
    def compute_unit(self) -> str:
        return self.units[0].key if self.units else ""

    def peaks_fused(self) -> str:
        """Per unit its time and peak(s), busiest first: the compute side of the whole-graph modes."""
        return "; ".join(u.describe() for u in self.units)

    def peaks_unfused(self) -> str:
        """Each node on its own unit: ``matrix.tf32 4.947e+14 FLOP/s x 2 nodes; …``."""
        counts: dict[tuple[str, float], int] = {}
        for nb in self.per_node:
            if nb.unit:
                counts[(nb.unit, nb.peak_flop_per_s or 0.0)] = counts.get((nb.unit, nb.peak_flop_per_s or 0.0), 0) + 1
        return "; ".join(f"{u} {p:.4g} FLOP/s x {n} node{'s' if n > 1 else ''}" for (u, p), n in counts.items())


@dataclass(frozen=True)
class InverseBound:
    """The least peak FLOP/s and DRAM bandwidth that meet a target latency in one mode.

    A factor is the minimum over the hardware's figure: above 1 the hardware must grow by that
    much, below 1 it has that much to spare.
    """

    mode: Mode
    flops: int
    bytes: int
    min_flop_per_s: float
    min_bytes_per_s: float
    compute_factor: float
    bandwidth_factor: float

    @property
    def meets_target(self) -> bool:
        """Whether the hardware as it is reaches the target in this mode."""
        return self.compute_factor <= 1 and self.bandwidth_factor <= 1


@dataclass(frozen=True)
class InverseRoofline:
    """Inverse roofline for a target latency, per mode, against one hardware spec."""

    target_latency_s: float
    hardware: str
    dtype: str
    peak_flop_per_s: float
    dram_bytes_per_s: float
    unfused_graph: InverseBound
    fused: InverseBound


def hardware_label(hw: RooflineHardware) -> str:
    """``name@digest``: which spec, and which version of its figures, a bound used."""
    return f"{hw.name}@{hw.digest()[:12]}"


def sol_bounds(graph: EinsumGraph, hw: RooflineHardware, dtype: str | None = None,
               fp32_math: Fp32Math | str | None = None) -> SolBounds:
    """Unfused (per framework op and per IR kernel), whole-graph unfused and fused roofline bounds
    of ``graph`` on ``hw``, each node on its own unit (see the module docstring).

    ``fp32_math`` is the policy for fp32 contractions (an ``Fp32Math``, or ``"auto"``, ``"tf32"``,
    ``"ieee"``; default ``auto`` with the frameworks' defaults). ``dtype`` forces one peak,
    ``hw.peak_for(dtype)``, for every node: the single-peak what-if, not a lower bound in general.
    """
    fp32 = fp32_math if isinstance(fp32_math, Fp32Math) else Fp32Math(policy=fp32_math or "auto")
    beta = float(hw.dram_bytes_per_s)
    label = hardware_label(hw)
    if not (beta > 0 and math.isfinite(beta)):
        raise BoundsError(f"{label}: DRAM bytes/s is {beta!r}; a bound needs a positive, finite figure")
    tensor_dtypes = {t.name: t.dtype for t in graph.program.tensors}
    units = {n.name: node_unit(n, tensor_dtypes, hw, fp32, dtype) for n in graph.nodes}
    for name, u in units.items():
        if u is not None and not (u.peak_flop_per_s > 0 and math.isfinite(u.peak_flop_per_s)):
            raise BoundsError(f"{label}: peak FLOP/s for {u.label} (node {name!r}) is {u.peak_flop_per_s!r}; "
                              "a bound needs a positive, finite figure")
    ops = framework_ops(graph)
    group_of = {n: g for g, members, _ in ops for n in members}

    per_node = []
    for n in graph.nodes:
        u = units[n.name]
        compute_s, memory_s = (u.compute_s if u else 0.0), n.bytes / beta
        per_node.append(NodeBound(n.name, max(compute_s, memory_s), compute_s, memory_s,
                                  _limiter(compute_s, memory_s), unit=u.label if u else "",
                                  peak_flop_per_s=u.peak_flop_per_s if u else None, group=group_of[n.name]))
    by_name = {n.name: n for n in graph.nodes}
    per_op = []
    for g, members, nbytes in ops:
        compute_s = _busiest([units[m] for m in members])[0]
        memory_s = nbytes / beta
        per_op.append(OpBound(g, tuple(members), sum(by_name[m].flops for m in members), nbytes,
                              max(compute_s, memory_s), compute_s, memory_s, _limiter(compute_s, memory_s)))
    unit_times = _unit_times(list(units.values()))
    compute_s = unit_times[0].time_s if unit_times else 0.0
    flops, bytes_kernel = graph.flops, graph.bytes_unfused
    bytes_op = sum(o.bytes for o in per_op)
    peak = _effective_peak(unit_times, flops, compute_s, hw, dtype or graph.dtype)
    unfused = Bound(
        mode="unfused", time_s=sum(o.time_s for o in per_op), flops=flops, bytes=bytes_op,
        limiter=_limiter(sum(o.compute_s for o in per_op), bytes_op / beta),
        intensity_flop_per_byte=_intensity(flops, bytes_op), hardware=label,
    )
    unfused_kernel = Bound(
        mode="unfused_kernel", time_s=sum(nb.time_s for nb in per_node), flops=flops, bytes=bytes_kernel,
        limiter=_limiter(sum(nb.compute_s for nb in per_node), bytes_kernel / beta),
        intensity_flop_per_byte=_intensity(flops, bytes_kernel), hardware=label,
    )
    return SolBounds(
        unfused=unfused,
        fused=_whole_graph_bound("fused", flops, graph.io_bytes, compute_s, beta, label),
        unfused_graph=_whole_graph_bound("unfused_graph", flops, bytes_op, compute_s, beta, label),
        hardware=label, dtype=dtype or graph.dtype, peak_flop_per_s=peak, dram_bytes_per_s=beta,
        per_node=tuple(per_node), unfused_kernel=unfused_kernel, per_op=tuple(per_op),
        units=tuple(unit_times), fp32_math=fp32.describe(),
    )


def framework_ops(graph: EinsumGraph) -> list[tuple[str, list[str], int]]:
    """(group key, node names, DRAM bytes of one eager kernel) per framework op, in program order:
    ``solar_assets.graph.op_groups`` (nodes grouped by ``origin.node``; a node without an origin is its
    own group). A group of one node moves exactly that node's ``bytes``."""
    from solar_assets.graph import op_groups

    by_name = {n.name: n for n in graph.nodes}
    ops = []
    for g in op_groups(graph):
        key = f"op:{g.key}" if g.origin is not None else g.key
        nbytes = by_name[g.nodes[0]].bytes if len(g.nodes) == 1 else g.bytes
        ops.append((key, list(g.nodes), nbytes))
    return ops


def inverse_roofline(subject: SolBounds | EinsumGraph, hw: RooflineHardware | float | None = None,
                     target_latency_s: float | None = None, *, dtype: str | None = None) -> InverseRoofline:
    """Minimum peak FLOP/s and DRAM bandwidth to run in ``target_latency_s``, per mode.

    Call it on bounds already computed, ``inverse_roofline(bounds, T)``, or on a graph and a
    spec, ``inverse_roofline(graph, hw, T)``. Per mode (unfused_graph, fused):
    Π_min = F/T, β_min = B/T, so max(F/Π_min, B/β_min) = T; factors are Π_min/Π and β_min/β.
    """
    if isinstance(subject, SolBounds):
        if target_latency_s is None and isinstance(hw, (int, float)):
            hw, target_latency_s = None, float(hw)
        if hw is not None or target_latency_s is None:
            raise TypeError("inverse_roofline(bounds, target_latency_s): bounds already name their hardware")
        bounds = subject
    else:
        if hw is None or isinstance(hw, (int, float)) or target_latency_s is None:
            raise TypeError("inverse_roofline(graph, hw, target_latency_s) needs a hardware spec and a latency")
        bounds = sol_bounds(subject, hw, dtype)
    target = float(target_latency_s)
    if not (target > 0 and math.isfinite(target)):
        raise BoundsError(f"target latency must be positive and finite, got {target_latency_s!r} s")

    def inverse(b: Bound) -> InverseBound:
        min_flop, min_bytes = b.flops / target, b.bytes / target
        return InverseBound(b.mode, b.flops, b.bytes, min_flop, min_bytes,
                            min_flop / bounds.peak_flop_per_s, min_bytes / bounds.dram_bytes_per_s)

    return InverseRoofline(
        target_latency_s=target, hardware=bounds.hardware, dtype=bounds.dtype,
        peak_flop_per_s=bounds.peak_flop_per_s, dram_bytes_per_s=bounds.dram_bytes_per_s,
        unfused_graph=inverse(bounds.unfused_graph), fused=inverse(bounds.fused),
    )


def _whole_graph_bound(mode: Mode, flops: int, nbytes: int, compute_s: float, beta: float, label: str) -> Bound:
    memory_s = nbytes / beta
    return Bound(mode=mode, time_s=max(compute_s, memory_s), flops=flops, bytes=nbytes,
                 limiter=_limiter(compute_s, memory_s),
                 intensity_flop_per_byte=_intensity(flops, nbytes), hardware=label)


def _unit_times(units: list[NodeUnit | None]) -> list[UnitTime]:
    """Each concurrent unit's busy time (Σ F/Π over its nodes), busiest first."""
    work: dict[str, list[NodeUnit]] = {}
    for u in units:
        if u is not None and u.flops:
            work.setdefault(u.key, []).append(u)
    times = []
    for key, us in work.items():
        peaks = tuple(dict((u.dtype, u.peak_flop_per_s) for u in us).items())
        times.append(UnitTime(key, sum(u.flops for u in us), math.fsum(u.compute_s for u in us), peaks))
    return sorted(times, key=lambda t: -t.time_s)


def _busiest(units: list[NodeUnit | None]) -> tuple[float, str]:
    times = _unit_times(units)
    return (times[0].time_s, times[0].key) if times else (0.0, "")


def _effective_peak(units: list[UnitTime], flops: int, compute_s: float, hw: RooflineHardware,
                    dtype: str) -> float:
    """ΣF / T_c; exactly the unit's peak when a single unit at a single dtype does all the work.
    A graph that does no arithmetic has no compute time: it shows the part's peak at its dtype."""
    if len(units) == 1 and len(units[0].peaks) == 1 and units[0].flops == flops:
        return units[0].peaks[0][1]
    if compute_s > 0:
        return flops / compute_s
    try:
        return float(hw.peak_for(dtype))
    except (SolarError, KeyError):
        table = getattr(hw, "peak_flop_per_s", None)
        return max((v for _, v in table.items()), default=1.0) if table is not None else 1.0


def _limiter(compute_s: float, memory_s: float) -> Limiter:
    return "compute" if compute_s > memory_s else "memory"


def _intensity(flops: int, nbytes: int) -> float:
    if nbytes:
        return flops / nbytes
    return math.inf if flops else 0.0
