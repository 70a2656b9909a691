"""Gather and scatter through the IR's indirect subscripts (``X[I[n, 0] + w, c]``), for both
frontends: a frontend says which subscript each dim of the indexed tensor gets; the kernels
are written here. The indexed tensor is read (or written) whole, so a view is copied first (a
lazy view cannot carry an indirect subscript); the index may stay a view. The IR treats an
out-of-range index as an execution error, never a wrap-around.
"""
from __future__ import annotations

from typing import Callable, Sequence

from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import ProgramBuilder, lins, loop_vars

Subscripts = Callable[[list[Lin]], Sequence[str]]  # loop position -> one subscript per indexed dim


def gather(b: ProgramBuilder, hint: str, x: SymTensor, out: SymTensor, subscripts: Subscripts,
           src_hint: str = "_src") -> SymTensor:
    """``out[i...] = x[subscripts(i)]`` over ``out``'s shape."""
    x = b.materialize(x, hint + src_hint)
    v = loop_vars("i", len(out.shape))
    idx = lins(v)
    subs = subscripts(idx)
    b.kernel(hint, list(zip(v, out.shape)), out.access(idx), "=", f"{x.base}[{', '.join(subs)}]")
    return out


def scatter(b: ProgramBuilder, hint: str, out: SymTensor, shape: Sequence[int], subscripts: Subscripts,
            value: Callable[[list[Lin]], str], update: str) -> SymTensor:
    """``out[subscripts(u)] (update)= value(u)`` over ``shape`` (the updates'); ``out`` already
    holds the operand's values (an accumulating update adds to them: init 'keep')."""
    v = loop_vars("u", len(shape))
    idx = lins(v)
    b.kernel(hint, list(zip(v, shape)), f"{out.base}[{', '.join(subscripts(idx))}]", update, value(idx),
             init="keep" if update != "=" else "identity")
    return out
