"""One loop instead of a nest, for a kernel that is elementwise over whole tensors of one shape.

``Y[i, j, k] = f(X[i, j, k], Z[i, j, k])`` over tensors of shape ``(n0, n1, n2)`` computes the same
as ``Y[i] = f(X[i], Z[i])`` over their flat, row-major views of ``n0·n1·n2`` elements. The
executor runs the flat form where the arrays allow it (C-contiguous): the same elementwise
function at every rank is then one source and one numba compile (each is 0.1–0.5 s; 192 of the
646 kernel sources of a full KernelBench run were such kernels, 44 sources once flat), and one
loop that the compiler vectorises.

Only what cannot change the result is flattened: an assignment (``=``) with no ``where``
condition, no repeat variables and no indirect subscripts, whose output and every read (a 0-d
scalar read aside) are indexed by exactly the loop variables in loop order, over tensors whose
shape is the loop box, none with a pad value, and no loop variable used as a value.
"""
from __future__ import annotations

import ast
import math
from collections.abc import Mapping

from ir_schemas import Loop, TensorDecl
from solar_assets.ir import Access, Affine, ParsedKernel, parse_kernel


def flat_kernel(pk: ParsedKernel, tensors: Mapping[str, TensorDecl]
                ) -> tuple[ParsedKernel, dict[str, TensorDecl]] | None:
    """The kernel as one loop over its tensors' flat views, and those tensors declared flat; None
    where the kernel is not of the elementwise kind above."""
    k = pk.kernel
    if len(k.loops) < 2 or k.update != "=" or k.where is not None or pk.free or pk.indirect:
        return None
    loop_vars = tuple(lp.var for lp in k.loops)
    shape = tuple(lp.extent for lp in k.loops)
    flat: set[str] = set()
    for acc in (pk.out, *pk.reads):
        if not acc.index and acc is not pk.out:
            continue  # a scalar read: the same element at every iteration
        decl = tensors[acc.tensor]
        if not _identity(acc, loop_vars) or tuple(decl.shape) != shape or decl.pad_value is not None:
            return None
        flat.add(acc.tensor)
    rewrite = _Flatten(loop_vars)
    out, expr = rewrite.text(k.out), rewrite.text(k.expr)
    if rewrite.stray:
        return None  # a loop variable as a value (``Y[i, j] = j``): its meaning needs the nest
    n = math.prod(shape)
    kernel = k.model_copy(update={"loops": (Loop(var=loop_vars[0], extent=n),), "out": out, "expr": expr})
    declared = {t: (tensors[t].model_copy(update={"shape": (n,)}) if t in flat else tensors[t])
                for t in {a.tensor for a in (pk.out, *pk.reads)}}
    return parse_kernel(kernel), declared


def _identity(acc: Access, loop_vars: tuple[str, ...]) -> bool:
    return len(acc.index) == len(loop_vars) and all(
        isinstance(a, Affine) and a.const == 0 and a.coefs == ((v, 1),) for a, v in zip(acc.index, loop_vars))


class _Flatten(ast.NodeTransformer):
    """``T[i, j, k]`` (the loop variables in order) to ``T[i]``; notes any other use of them."""

    def __init__(self, loop_vars: tuple[str, ...]) -> None:
        self.loop_vars = loop_vars
        self.stray = False

    def text(self, source: str) -> str:
        return ast.unparse(self.visit(ast.parse(source.strip(), mode="eval").body))

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        index = node.slice
        if isinstance(index, ast.Tuple) and [getattr(e, "id", None) for e in index.elts] == list(self.loop_vars):
            node.slice = ast.Name(self.loop_vars[0], ast.Load())
            return node
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.loop_vars:
            self.stray = True
        return node
