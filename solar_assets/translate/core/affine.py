"""Lazy views: a framework tensor seen as an affine re-indexing of an IR tensor.

permute, expand, slice, select and splitting reshapes move no data in PyTorch; the tracer
keeps them as index maps and folds them into the subscripts of the kernels that read
them, so the IR (and the byte counts) show only the copies the framework really makes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from solar_assets.ir.expr import Affine


Lin = Affine
"""The translators' name for the IR's affine form (one type: a subscript built here is the
subscript the IR parses). ``Lin.of(v, c)``, ``Lin.constant(k)``, ``+``, ``scale``, ``subst``."""


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

    def per_dim_monotone(self, base_shape: Sequence[int], dims: Sequence[int] | None = None) -> bool:
        """Each base dim is one view dim, unshifted, over the whole extent (or is constant), and
        every view dim in ``dims`` (those a window may leave; default all) is one base dim's: an
        out-of-range view index there is then out of range in the base too (needed for padding).
        A slice is not (a read just before it is a real element of the base), nor a broadcast
        along a padded dim (an expanded dim reads the one element wherever it looks: the gradient
        of a sum, ``ones`` expanded, read by a transposed convolution's window). A broadcast or
        unsqueezed dim no window leaves (batch, channels) keeps the view lazy."""
        used: set[str] = set()
        for lin, n in zip(self.index, base_shape):
            if not lin.coefs:
                continue
            if len(lin.coefs) > 1 or lin.const != 0 or lin.coefs[0][1] != 1:
                return False
            s = lin.coefs[0][0]
            if s in used or self.shape[int(s[1:])] != n:
                return False
            used.add(s)
        wanted = range(len(self.shape)) if dims is None else dims
        return all(view_dim(d % len(self.shape)) in used for d in wanted)


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
