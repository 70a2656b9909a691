"""Roofline bounds of an einsum graph, and the inverse question: what hardware meets a latency.

With peak Π (FLOP/s at the workload's dtype) and DRAM bandwidth β:

* ``unfused``: every node on its own, Σ_n max(F_n/Π, B_n/β). Its limiter compares the summed
  demands, Σ_n F_n/Π against Σ_n B_n/β: the resource the program as a whole asks more of.
  ``SolBounds.per_node`` keeps each node's own time and limiter.
* ``unfused_graph``: the whole-graph form of the same traffic, max(ΣF/Π, ΣB/β).
* ``fused``: intermediates stay on chip, max(ΣF/Π, B_io/β) with B_io the graph inputs, weights
  and outputs once each.

fused ≤ unfused_graph ≤ unfused holds by construction. A limiter is ``compute`` when the compute
time is strictly larger, otherwise ``memory`` (a tie, including a graph that does no work,
reads as memory). Intensity is FLOP per DRAM byte (inf when a bound moves no bytes but computes,
0 when it does neither). Nothing is clamped: a non-positive peak, bandwidth or target latency is
an error, not a floor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from solar_assets.errors import SolarError

if TYPE_CHECKING:
    from solar_assets.graph import EinsumGraph

CODE_VERSION = "1"
"""Bump when a formula changes: the Dagster code version of ``sol_bounds`` / ``inverse_roofline``."""

Mode = Literal["unfused", "fused", "unfused_graph", "cache_aware"]
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
    """One node's roofline time when it runs on its own."""

    name: str
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
    peak_flop_per_s: float
    dram_bytes_per_s: float
    per_node: tuple[NodeBound, ...] = ()

    @property
    def bounds(self) -> tuple[Bound, ...]:
        return (self.fused, self.unfused_graph, self.unfused)


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


def sol_bounds(graph: EinsumGraph, hw: RooflineHardware, dtype: str | None = None) -> SolBounds:
    """Unfused, whole-graph unfused and fused roofline bounds of ``graph`` on ``hw``.

    ``dtype`` picks the compute peak; by default the graph's dominant float dtype.
    """
    dtype = dtype or graph.dtype
    peak = float(hw.peak_for(dtype))
    beta = float(hw.dram_bytes_per_s)
    label = hardware_label(hw)
    for what, value in (("peak FLOP/s for " + dtype, peak), ("DRAM bytes/s", beta)):
        if not (value > 0 and math.isfinite(value)):
            raise BoundsError(f"{label}: {what} is {value!r}; a bound needs a positive, finite figure")

    per_node = []
    for n in graph.nodes:
        compute_s, memory_s = n.flops / peak, n.bytes / beta
        per_node.append(NodeBound(n.name, max(compute_s, memory_s), compute_s, memory_s,
                                  _limiter(compute_s, memory_s)))
    flops, bytes_unfused = graph.flops, graph.bytes_unfused
    compute_s = flops / peak
    unfused = Bound(
        mode="unfused", time_s=sum(nb.time_s for nb in per_node), flops=flops, bytes=bytes_unfused,
        limiter=_limiter(compute_s, bytes_unfused / beta),
        intensity_flop_per_byte=_intensity(flops, bytes_unfused), hardware=label,
    )
    return SolBounds(
        unfused=unfused,
        fused=_whole_graph_bound("fused", flops, graph.io_bytes, peak, beta, label),
        unfused_graph=_whole_graph_bound("unfused_graph", flops, bytes_unfused, peak, beta, label),
        hardware=label, dtype=dtype, peak_flop_per_s=peak, dram_bytes_per_s=beta,
        per_node=tuple(per_node),
    )


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


def _whole_graph_bound(mode: Mode, flops: int, nbytes: int, peak: float, beta: float, label: str) -> Bound:
    compute_s, memory_s = flops / peak, nbytes / beta
    return Bound(mode=mode, time_s=max(compute_s, memory_s), flops=flops, bytes=nbytes,
                 limiter=_limiter(compute_s, memory_s),
                 intensity_flop_per_byte=_intensity(flops, nbytes), hardware=label)


def _limiter(compute_s: float, memory_s: float) -> Limiter:
    return "compute" if compute_s > memory_s else "memory"


def _intensity(flops: int, nbytes: int) -> float:
    if nbytes:
        return flops / nbytes
    return math.inf if flops else 0.0
