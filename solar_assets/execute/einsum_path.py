"""Fast path: a pure sum-of-products kernel as one ``np.einsum`` call at BLAS speed.

Each operand is viewed through its affine subscripts with ``as_strided`` (a loop variable's
stride is Σ_d coef_d · stride_d, the origin is the element at the constant offsets), so a
GEMM, a batched matmul or an unpadded (strided, dilated) convolution needs no copy and no
compile. The numba loop nest stays the literal reference; tests cross-check the two.
"""
from __future__ import annotations

import ast
import math
import string
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ir_schemas import TensorDecl
from solar_assets.execute.codegen import dtype_kind, is_injective
from solar_assets.ir import Access, ParsedKernel
from solar_assets.ir.expr import CONSTANT_NAMES


@dataclass(frozen=True)
class EinsumPlan:
    subscripts: str  # e.g. "ik,kj->ij"
    factors: tuple[Access, ...]  # one operand per read, in expression order
    out_vars: tuple[str, ...]
    scale: float  # numeric constants of the product × trip counts of loops nothing indexes

    def __str__(self) -> str:
        return f"einsum({self.subscripts!r}) * {self.scale:g}"


def _product_factors(node: ast.expr, reads: list[ast.Subscript]) -> float | None:
    """Collect the reads of a product of reads and constants; returns the constant factor,
    or None when ``node`` is anything else."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left = _product_factors(node.left, reads)
        right = None if left is None else _product_factors(node.right, reads)
        return None if right is None else left * right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _product_factors(node.operand, reads)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id in CONSTANT_NAMES:
        return CONSTANT_NAMES[node.id]
    if isinstance(node, ast.Subscript):
        reads.append(node)
        return 1.0
    return None


def plan_einsum(pk: ParsedKernel, tensors: Mapping[str, TensorDecl]) -> EinsumPlan | None:
    """An einsum for ``pk`` when it is a ``+=`` of a product of float reads (and constants)
    with in-range subscripts and an injective output; None otherwise."""
    k = pk.kernel
    ext = pk.extents
    loops = [lp.var for lp in k.loops]
    if k.update != "+=" or not pk.reads or len(loops) > len(string.ascii_letters):
        return None
    if pk.indirect or pk.where:  # indirect subscripts: the numba nest checks their values; a
        return None  # condition skips iterations, which a dense einsum cannot
    if any(e < 1 for e in ext.values()) or dtype_kind(tensors[pk.out.tensor].dtype) != "f":
        return None
    nodes: list[ast.Subscript] = []
    scale = _product_factors(pk.expr, nodes)
    if scale is None or len(nodes) != len(pk.reads) or not math.isfinite(scale):
        return None
    box = {**ext, **{v: 1 for v in pk.free}}  # a repeat variable: range checked per iteration below
    for acc in pk.reads:
        decl = tensors[acc.tensor]
        if acc.tensor == pk.out.tensor or dtype_kind(decl.dtype) != "f":
            return None
        if pk.free and decl.pad_value is not None:
            return None
        for a, size in zip(acc.index, decl.shape):
            lo, hi = a.range(box)
            if pk.free:
                lo, hi = 0, 0  # checked by the checker over the whole repeat (no pad value here)
            if lo < 0 or hi >= size:
                return None  # a padded read: the numba nest handles the bounds
    out_vars = [v for v in loops if any(a.coef(v) for a in pk.out.index)]
    if not is_injective(pk.out, ext, out_vars):
        return None
    letter = dict(zip(loops, string.ascii_letters))
    used = [[v for v in loops if any(a.coef(v) for a in acc.index)] for acc in pk.reads]
    read_vars = {v for vs in used for v in vs}
    if not set(out_vars) <= read_vars:
        return None  # a broadcast into the output: einsum cannot name it
    for v in loops:
        if v not in read_vars and v not in out_vars:
            scale *= ext[v]  # a loop nothing indexes repeats the same sum
    subscripts = ",".join("".join(letter[v] for v in vs) for vs in used)
    subscripts += "->" + "".join(letter[v] for v in out_vars)
    return EinsumPlan(subscripts, tuple(pk.reads), tuple(out_vars), scale)


def strided_view(arr: np.ndarray, acc: Access, vars_: list[str] | tuple[str, ...],
                 extents: Mapping[str, int], writeable: bool = False) -> np.ndarray:
    """``arr`` seen through ``acc``'s affine subscripts: one axis per variable of ``vars_``.
    The checker has proved every subscript in range, so the view stays inside ``arr``."""
    origin = arr[tuple(slice(a.const, None) for a in acc.index)] if acc.index else arr
    shape = tuple(extents[v] for v in vars_)
    strides = tuple(sum(a.coef(v) * s for a, s in zip(acc.index, arr.strides)) for v in vars_)
    return np.lib.stride_tricks.as_strided(origin, shape, strides, writeable=writeable)


def bind_free(acc: Access, values: Mapping[str, int]) -> Access:
    """``acc`` with repeat variables replaced by their current values (folded into constants)."""
    return acc.bind(dict(values))


def run_einsum(plan: EinsumPlan, pk: ParsedKernel, out: np.ndarray,
               arrays: Mapping[str, np.ndarray], free_values: Mapping[str, int] | None = None) -> None:
    """Execute ``pk`` (planned by ``plan_einsum``) into ``out``; ``free_values`` gives the current
    iteration of each repeat variable the subscripts use."""
    ext = pk.extents
    loops = [lp.var for lp in pk.kernel.loops]
    values = dict(free_values or {})
    views = []
    for acc in plan.factors:
        acc = bind_free(acc, values)
        vars_ = [v for v in loops if any(a.coef(v) for a in acc.index)]
        views.append(strided_view(arrays[acc.tensor], acc, vars_, ext))
    result = np.einsum(plan.subscripts, *views, optimize=True)
    if plan.scale != 1.0:
        result = result * plan.scale
    target = strided_view(out, bind_free(pk.out, values), plan.out_vars, ext, writeable=True)
    if pk.kernel.init == "identity":
        target[...] = result
    else:
        target += result
