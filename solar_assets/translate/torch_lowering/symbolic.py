"""Lazy views: a framework tensor seen as an affine re-indexing of an IR tensor.

permute, expand, slice, select and splitting reshapes move no data in PyTorch; the tracer
keeps them as index maps and folds them into the subscripts of the kernels that read
them, so the IR (and the byte counts) show only the copies the framework really makes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from solar_assets.ir.expr import Affine


@dataclass(frozen=True)
class Lin:
    """An affine form ``const + Σ coef·symbol`` with integer coefficients."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @staticmethod
    def of(symbol: str, coef: int = 1) -> "Lin":
        return Lin(((symbol, coef),), 0) if coef else Lin()

    @staticmethod
    def constant(c: int) -> "Lin":
        return Lin((), c)

    def __add__(self, other: "Lin") -> "Lin":
        acc = dict(self.terms)
        for s, c in other.terms:
            acc[s] = acc.get(s, 0) + c
        return Lin(tuple((s, c) for s, c in acc.items() if c), self.const + other.const)

    def scale(self, k: int) -> "Lin":
        return Lin(tuple((s, c * k) for s, c in self.terms if c * k), self.const * k)

    def subst(self, env: Mapping[str, "Lin"]) -> "Lin":
        out = Lin.constant(self.const)
        for s, c in self.terms:
            out = out + (env[s].scale(c) if s in env else Lin.of(s, c))
        return out

    def render(self) -> str:
        return str(Affine(self.terms, self.const))


def view_dim(i: int) -> str:
    return f"#{i}"


@dataclass(frozen=True)
class SymTensor:
    """A framework value: IR tensor ``base`` read through ``index`` (one Lin per base dim,
    over the view's own dims ``#0, #1, ...``)."""

    base: str
    shape: tuple[int, ...]
    dtype: str
    index: tuple[Lin, ...]

    @staticmethod
    def whole(base: str, shape: Sequence[int], dtype: str) -> "SymTensor":
        return SymTensor(base, tuple(shape), dtype, tuple(Lin.of(view_dim(i)) for i in range(len(shape))))

    def is_whole(self, base_shape: Sequence[int]) -> bool:
        return self.shape == tuple(base_shape) and self.index == tuple(
            Lin.of(view_dim(i)) for i in range(len(self.shape))
        )

    def reindex(self, new_shape: Sequence[int], old_of_new: Sequence[Lin]) -> "SymTensor":
        """A view of this view: ``old_of_new[d]`` gives this view's dim d in the new view's dims."""
        env = {view_dim(d): lin for d, lin in enumerate(old_of_new)}
        return SymTensor(self.base, tuple(new_shape), self.dtype, tuple(lin.subst(env) for lin in self.index))

    def access(self, idx: Sequence[Lin]) -> str:
        """``base[...]`` read at view position ``idx`` (affine forms over loop variables)."""
        env = {view_dim(d): lin for d, lin in enumerate(idx)}
        if not self.index:
            return f"{self.base}[()]"  # a rank-0 tensor
        return f"{self.base}[{', '.join(lin.subst(env).render() for lin in self.index)}]"

    def per_dim_monotone(self) -> bool:
        """Each base dim follows one view dim with coefficient +1 (or is constant): an
        out-of-range view index is then out of range in the base too (needed for padding)."""
        used: set[str] = set()
        for lin in self.index:
            if len(lin.terms) > 1 or any(c != 1 for _, c in lin.terms):
                return False
            for s, _ in lin.terms:
                if s in used:
                    return False
                used.add(s)
        return True


def split_reshape(old: Sequence[int], new: Sequence[int]) -> list[Lin] | None:
    """Old view dims as affine forms of new dims when the reshape only splits dims (or adds
    and drops size-1 dims); None when it merges dims, which needs a contiguous tensor."""
    old_dims = [(i, s) for i, s in enumerate(old) if s != 1]
    new_dims = [(i, s) for i, s in enumerate(new) if s != 1]
    result: list[Lin] = [Lin.constant(0) for _ in old]
    j = 0
    for oi, osize in old_dims:
        group: list[tuple[int, int]] = []
        prod = 1
        while prod < osize and j < len(new_dims):
            group.append(new_dims[j])
            prod *= new_dims[j][1]
            j += 1
        if prod != osize:
            return None
        lin, stride = Lin(), 1
        for ni, nsize in reversed(group):
            lin = lin + Lin.of(view_dim(ni), stride)
            stride *= nsize
        result[oi] = lin
    return result if j == len(new_dims) else None
