"""Transposed convolution written straight into its (cropped) output, for both tracers.

Per spatial dim, input position ``i`` and tap ``r`` contribute to output position
``o = i·s + r·d + off`` (PyTorch: ``off = -padding``; JAX: ``s`` the lhs dilation, ``d`` the negated
rhs dilation, ``off = pad_lo``), kept when ``0 ≤ o < O``. Eager runs this as one kernel that reads
the input and weight and writes the output once; an IR that scatters into an uncropped buffer and
then copies the crop moves that buffer twice (2.34× eager's bytes on a 4×4, stride-2 layer).

Each dim is lowered one of two ways:

* **scatter** (every product lands inside the output: no crop): loops over ``i`` and ``r``, output
  subscript ``i·s + r·d + off``; the MACs are exactly the real products;
* **phases** (some products would land outside): the output positions ``o = q·s + φ`` of one phase
  ``φ`` take the taps ``r ≡ r0 (mod s / gcd(s, |d|))`` whose products reach them, read at input
  position ``q + c0 - j·(d / gcd)`` (zero outside the input: a pad value). One kernel per phase
  combination, each writing its own positions of the output, none of the crop. Its MACs count,
  per dim and tap, the output positions of the tap's phase.

A phase plan is used only where its MACs equal the real products (``n_in·K`` per dim, the count
of FlopCounterMode and of the uncropped form), which holds whenever ``O = n_in·s`` (the usual
"same" shapes: 4×4 with stride 2 and padding 1; 3×3, stride 2, padding 1, output_padding 1). Elsewhere
the caller keeps the uncropped form (``plan_transposed`` returns None): a phase plan with more MACs
would count products of the zero padding, and one with fewer (it skips products that land in the
crop, as on a 5-wide kernel with stride 3 and padding 2) would disagree with FlopCounterMode.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

from solar_assets.translate.core.affine import Lin


@dataclass(frozen=True)
class Piece:
    """One dim of one kernel: two loops, and the subscripts of output, input and weight."""

    loops: tuple[tuple[str, int], ...]
    out: Lin
    x: Lin
    w: Lin
    x_range: tuple[int, int]  # lowest and highest input position read (may leave [0, n_in))


@dataclass(frozen=True)
class DimPlan:
    pieces: tuple[Piece, ...]
    covered: bool  # every output position gets at least one product
    macs: int  # products counted per (batch, channel) pair: Σ over pieces of the loop sizes


def plan_dim(dim: int, n_in: int, k: int, s: int, d: int, off: int, n_out: int) -> DimPlan:
    """The lowering of one spatial dim (see the module docstring)."""
    p, r = f"p{dim}", f"r{dim}"
    lo = off + min(0, (k - 1) * d)
    hi = off + (n_in - 1) * s + max(0, (k - 1) * d)
    if lo >= 0 and hi < n_out:  # no product leaves the output: scatter
        hit = {i * s + t * d + off for i in range(n_in) for t in range(k)}
        piece = Piece(((p, n_in), (r, k)), Lin.of(p, s) + Lin.of(r, d) + Lin.constant(off), Lin.of(p), Lin.of(r),
                      (0, n_in - 1))
        return DimPlan((piece,), len(hit) == n_out, n_in * k)
    g = math.gcd(s, abs(d))
    step = s // g  # taps of one phase are ``step`` apart
    pieces, covered = [], True
    for phase in range(min(s, n_out)):
        n_q = -(-(n_out - phase) // s)  # output positions q·s + phase below n_out
        taps = [t for t in range(k) if (phase - off - t * d) % s == 0]
        if not taps:
            covered = False
            continue
        r0 = taps[0]
        c0 = (phase - off - r0 * d) // s
        dj = step * d // s  # the input position falls by dj per tap of the phase
        n_j = len(taps)
        x_lo = c0 - max(0, (n_j - 1) * dj)
        x_hi = n_q - 1 + c0 - min(0, (n_j - 1) * dj)
        pieces.append(Piece(((p, n_q), (r, n_j)), Lin.of(p, s) + Lin.constant(phase),
                            Lin.of(p) + Lin.of(r, -dj) + Lin.constant(c0), Lin.of(r, step) + Lin.constant(r0),
                            (x_lo, x_hi)))
    return DimPlan(tuple(pieces), covered, sum(pc.loops[0][1] * pc.loops[1][1] for pc in pieces))


@dataclass(frozen=True)
class TransposedPlan:
    dims: tuple[DimPlan, ...]
    n_in: tuple[int, ...]

    @property
    def covered(self) -> bool:
        return all(dp.covered for dp in self.dims)

    def reads_padding(self) -> bool:
        """Whether some kernel reads the input outside its extent (it needs a zero pad value)."""
        return any(pc.x_range[0] < 0 or pc.x_range[1] >= n for dp, n in zip(self.dims, self.n_in) for pc in dp.pieces)

    def kernels(self) -> list[tuple[Piece, ...]]:
        """One piece per dim for each kernel to emit (every phase combination)."""
        return list(itertools.product(*(dp.pieces for dp in self.dims)))


def plan_transposed(n_in: Sequence[int], k: Sequence[int], s: Sequence[int], d: Sequence[int],
                    off: Sequence[int], n_out: Sequence[int]) -> TransposedPlan | None:
    """The per-dim plans, or None when a dim's plan counts other MACs than the real products
    (``n_in·K``)."""
    dims = tuple(plan_dim(j, *args) for j, args in enumerate(zip(n_in, k, s, d, off, n_out)))
    if any(dp.macs != n * kk for dp, n, kk in zip(dims, n_in, k)):
        return None
    return TransposedPlan(dims, tuple(n_in))


def emit_transposed(plan: TransposedPlan, kernel: Callable[[list[tuple[str, int]], list[Lin], list[Lin], list[Lin],
                                                            str], None], init: str) -> None:
    """Call ``kernel(spatial_loops, out_idx, x_idx, w_idx, init)`` once per kernel of the plan."""
    for pieces in plan.kernels():
        loops = [lp for pc in pieces for lp in pc.loops]
        kernel(loops, [pc.out for pc in pieces], [pc.x for pc in pieces], [pc.w for pc in pieces], init)
