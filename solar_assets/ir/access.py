"""A tensor access in a kernel statement: ``T[i, j + 1]`` with affine subscripts, or indirect ones.

A subscript is an ``Affine`` in the loop variables (and the free variables of enclosing
``Repeat`` steps), or an ``Indirect``: a read of an integer tensor with affine subscripts plus
an optional affine offset, ``X[I[n, k] + 1, c]``. ``parse_access`` is the one parser of a read,
shared by the statement parser (``ir.expr``) and every walk of an expression (``ir.interpreter``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from solar_assets.errors import IRError
from solar_assets.ir.affine import Affine, parse_affine


@dataclass(frozen=True)
class Indirect:
    """An indirect subscript ``I[a, b] + offset``: the value read from an integer tensor.

    Shaped like ``Affine`` where analysis code only needs the variables (``vars`` are those of
    the index read and of the offset; ``coefs`` is empty, since the subscript moves with them in
    no affine way, and ``coef`` is 0).
    """

    index: "Access"
    offset: Affine = Affine((), 0)

    coefs = ()

    @property
    def vars(self) -> tuple[str, ...]:
        seen = dict.fromkeys(v for a in self.index.index for v in a.vars)
        seen.update(dict.fromkeys(self.offset.vars))
        return tuple(seen)

    def coef(self, var: str) -> int:
        return 0

    def bind(self, values: dict[str, int]) -> Indirect:
        return Indirect(self.index.bind(values), self.offset.bind(values))

    def __str__(self) -> str:
        if not self.offset.coefs and self.offset.const == 0:
            return str(self.index)
        off = str(self.offset)
        return f"{self.index} - {off[1:]}" if off.startswith("-") else f"{self.index} + {off}"


@dataclass(frozen=True)
class Access:
    """A tensor read or write ``tensor[index...]``."""

    tensor: str
    index: tuple[Affine | Indirect, ...]

    @property
    def is_indirect(self) -> bool:
        return any(isinstance(a, Indirect) for a in self.index)

    def bind(self, values: dict[str, int]) -> Access:
        """This access with the variables in ``values`` (e.g. a repeat's) fixed to those values."""
        if not values:
            return self
        return Access(self.tensor, tuple(a.bind(values) for a in self.index))

    def index_reads(self) -> tuple["Access", ...]:
        """The index tensors this access reads (its indirect subscripts' reads)."""
        return tuple(a.index for a in self.index if isinstance(a, Indirect))

    def __str__(self) -> str:
        return f"{self.tensor}[{', '.join(map(str, self.index)) or '()'}]"



def _signed_terms(node: ast.expr, sign: int = 1) -> list[tuple[int, ast.expr]]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        right = sign if isinstance(node.op, ast.Add) else -sign
        return _signed_terms(node.left, sign) + _signed_terms(node.right, right)
    return [(sign, node)]


def _parse_subscript(node: ast.expr, loop_vars: dict[str, int] | set[str], where: str,
                     allow_indirect: bool) -> Affine | Indirect:
    """An affine subscript, or ``I[...] (+|-) affine`` when ``allow_indirect``."""
    if not any(isinstance(n, ast.Subscript) for n in ast.walk(node)):
        return parse_affine(node, loop_vars, where)
    text = ast.unparse(node)
    if not allow_indirect:
        raise IRError(f"{where}: subscript {text!r} of an index read is itself indirect (nested indirection)")
    terms = _signed_terms(node)
    reads = [(sg, t) for sg, t in terms if isinstance(t, ast.Subscript)]
    rest = [(sg, t) for sg, t in terms if not isinstance(t, ast.Subscript)]
    if len(reads) != 1 or reads[0][0] != 1 or any(
            isinstance(n, ast.Subscript) for _, t in rest for n in ast.walk(t)):
        raise IRError(f"{where}: indirect subscript {text!r} must be one index read plus an optional affine "
                      f"offset, like I[n, k] + 1")
    index = parse_access(reads[0][1], loop_vars, where, allow_indirect=False)
    offset: ast.expr = ast.Constant(0)
    for sg, t in rest:
        offset = ast.BinOp(offset, ast.Add() if sg > 0 else ast.Sub(), t)
    return Indirect(index, parse_affine(offset, loop_vars, where))


def parse_access(node: ast.expr, loop_vars: dict[str, int] | set[str], where: str,
                 allow_indirect: bool = True) -> Access:
    """``T[i, j + 1]`` (an ``ast.Subscript``) as an ``Access``: each subscript affine in
    ``loop_vars``, or indirect (``I[n, k] + 1``) where ``allow_indirect``."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        raise IRError(f"{where}: expected an access like T[i, j], got {ast.unparse(node)!r}")
    sl = node.slice
    items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return Access(node.value.id, tuple(_parse_subscript(i, loop_vars, where, allow_indirect) for i in items))
