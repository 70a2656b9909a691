"""Resampling at computed coordinates: bilinear upsampling and ``grid_sample`` (2-D and 3-D).

Each output position has a source coordinate per spatial dim (from the output index for
``upsample_bilinear2d``, from the grid's values for ``grid_sampler``). Its corners are integer
index tensors and weight tensors, computed by small kernels; the output is one accumulating kernel
per corner that reads the input through indirect subscripts ``X[n, c, I[n, h, w], J[n, h, w]]``.
A corner outside the input reads a clamped index with weight 0 (``padding_mode="zeros"``), or with
its weight (upsampling reads the edge twice, as ATen does); border padding clamps the coordinate first.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import torch

from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers

aten = torch.ops.aten

Coordinate = Callable[[list[Lin]], str]  # position loop index -> the source coordinate's expression


def _sample(c: Ctx, x: SymTensor, positions: Sequence[int], coords: Sequence[Coordinate], nearest: bool,
            batch_in_positions: bool, zero_outside: bool = True) -> SymTensor:
    """``out[n, ch, *o]`` interpolated from ``x`` (``(N, C, *spatial)``) at per-position coordinates;
    ``positions`` the shape the coordinates vary over (``(N, *o)`` or ``(*o)``). A corner outside
    the input weighs 0 (``zero_outside``: grid_sample's zeros padding) or reads the edge (upsampling)."""
    nd = len(coords)
    spatial = x.shape[2:]
    p = loop_vars("p", len(positions))
    at = lins(p)
    tensors = []  # per dim: (floor index, fraction) as tensors over the positions
    for d, coord in enumerate(coords):
        base = c.b.declare(f"{c.name}_c{d}", positions, "float64")
        c.b.kernel(base.base, list(zip(p, positions)), base.access(at), "=", coord(at))
        tensors.append(base)
    corners = [(0,) * nd] if nearest else list(itertools.product((0, 1), repeat=nd))
    out = c.new_output()
    shape = c.out_shape()
    o = loop_vars("o", len(shape))
    out_at = lins(o)
    pos_at = out_at[:1] + out_at[2:] if batch_in_positions else out_at[2:]
    for k, corner in enumerate(corners):
        weight = c.b.declare(f"{c.name}_w{k}", positions, "float64")
        terms, valid = [], []
        indices = []
        for d, bit in enumerate(corner):
            src = tensors[d].access(at)
            if nearest:
                value = f"select((floor({src} + 0.5) - {src} == 0.5) and (floor({src} + 0.5) * 0.5 != " \
                        f"floor(floor({src} + 0.5) * 0.5)), floor({src} + 0.5) - 1.0, floor({src} + 0.5))"
                frac = "1.0"
            else:
                value = f"floor({src}) + {bit}.0"
                frac = f"({src} - floor({src}))" if bit else f"(1.0 - ({src} - floor({src})))"
            terms.append(frac)
            if zero_outside:
                valid.append(f"select(({value}) >= 0.0 and ({value}) <= {spatial[d] - 1}.0, 1.0, 0.0)")
            index = c.b.declare(f"{c.name}_i{k}_{d}", positions, "int64")
            c.b.kernel(index.base, list(zip(p, positions)), index.access(at), "=",
                       f"min(max({value}, 0.0), {spatial[d] - 1}.0)")
            indices.append(index)
        c.b.kernel(weight.base, list(zip(p, positions)), weight.access(at), "=", " * ".join(terms + valid))
        read = f"{x.base}[{', '.join([out_at[0].render(), out_at[1].render()] + [i.access(pos_at) for i in indices])}]"
        c.b.kernel(f"{c.name}_corner{k}", list(zip(o, shape)), out.access(out_at), "+=",
                   f"{weight.access(pos_at)} * {read}", init="identity" if k == 0 else "keep")
    return out


@lowers(aten.upsample_bilinear2d)
def upsample_bilinear_lowering(c: Ctx, x: SymTensor, output_size=None, align_corners: bool = False,
                               scale_factors=None, *rest):
    """Source coordinate per output index: ``o·(in−1)/(out−1)`` with ``align_corners``, else
    ``max(0, (o + 0.5)·scale − 0.5)`` (``scale`` = in/out, or 1/scale_factor when given)."""
    x = c.b.materialize(x, c.name + "_src")
    out_size = c.out_shape()[2:]
    in_size = x.shape[2:]
    scales = list(scale_factors) if scale_factors else [None, None]

    def coord(d: int) -> Coordinate:
        def expr(at: list[Lin]) -> str:
            o = at[d].render()
            if align_corners:
                step = (in_size[d] - 1) / (out_size[d] - 1) if out_size[d] > 1 else 0.0
                return f"({o}) * {step!r}"
            scale = 1.0 / scales[d] if scales[d] else in_size[d] / out_size[d]
            return f"max(({o} + 0.5) * {scale!r} - 0.5, 0.0)"
        return expr
    return _sample(c, x, out_size, [coord(0), coord(1)], nearest=False, batch_in_positions=False,
                   zero_outside=False)


def _grid_sampler(c: Ctx, x: SymTensor, grid: SymTensor, interpolation: int, padding: int, align_corners: bool):
    if interpolation not in (0, 1):
        raise LoweringGap("grid_sample with bicubic interpolation")
    if padding not in (0, 1):
        raise LoweringGap("grid_sample with reflection padding")
    x = c.b.materialize(x, c.name + "_src")
    nd = len(x.shape) - 2
    positions = tuple(grid.shape[:-1])  # (N, *out)
    spatial = x.shape[2:]

    def coord(d: int) -> Coordinate:  # grid's last dim is (x, y[, z]): width first
        size = spatial[d]
        component = nd - 1 - d

        def expr(at: list[Lin]) -> str:
            g = grid.access([*at, Lin.constant(component)])
            u = f"(({g}) + 1.0) * 0.5 * {size - 1}.0" if align_corners else f"((({g}) + 1.0) * {size}.0 - 1.0) * 0.5"
            return f"min(max({u}, 0.0), {size - 1}.0)" if padding == 1 else u
        return expr
    return _sample(c, x, positions, [coord(d) for d in range(nd)], nearest=interpolation == 1,
                   batch_in_positions=True)


@lowers(aten.grid_sampler_2d, aten.grid_sampler_3d)
def grid_sampler_lowering(c: Ctx, x: SymTensor, grid: SymTensor, interpolation_mode: int, padding_mode: int,
                          align_corners: bool):
    return _grid_sampler(c, x, grid, int(interpolation_mode), int(padding_mode), bool(align_corners))
