"""Affine forms: ``const + Σ coef·var`` over loop variables, and their parser.

The one piece the kernel grammar (``expr``) and the iteration domains (``domain``) share: a
subscript is an affine form, and so is each side of a ``where`` comparison.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from solar_assets.errors import IRError


@dataclass(frozen=True)
class Affine:
    """``const + Σ coefs[v]·v`` over loop variables, integer coefficients."""

    coefs: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @property
    def vars(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.coefs)

    # Building forms (the translators' symbolic index maps are this type too): terms keep
    # the order they were added in, and a zero coefficient is dropped.
    @staticmethod
    def of(var: str, coef: int = 1) -> Affine:
        """``coef·var`` (the zero form when ``coef`` is 0)."""
        return Affine(((var, coef),), 0) if coef else Affine()

    @staticmethod
    def constant(c: int) -> Affine:
        return Affine((), c)

    def __add__(self, other: Affine) -> Affine:
        acc = dict(self.coefs)
        for v, c in other.coefs:
            acc[v] = acc.get(v, 0) + c
        return Affine(tuple((v, c) for v, c in acc.items() if c), self.const + other.const)

    def scale(self, k: int) -> Affine:
        return Affine(tuple((v, c * k) for v, c in self.coefs if c * k), self.const * k)

    def subst(self, env: Mapping[str, Affine]) -> Affine:
        """Each variable in ``env`` replaced by its form (the others kept)."""
        out = Affine.constant(self.const)
        for v, c in self.coefs:
            out = out + (env[v].scale(c) if v in env else Affine.of(v, c))
        return out

    def render(self) -> str:
        """The subscript text (``str``), as kernel statements write it."""
        return str(self)

    def coef(self, var: str) -> int:
        return dict(self.coefs).get(var, 0)

    def range(self, extents: dict[str, int]) -> tuple[int, int]:
        """Smallest and largest value over the loop box (every extent ≥ 1)."""
        lo = hi = self.const
        for v, c in self.coefs:
            span = c * (extents[v] - 1)
            lo, hi = lo + min(0, span), hi + max(0, span)
        return lo, hi

    def bind(self, values: dict[str, int]) -> Affine:
        """This subscript with the variables in ``values`` replaced by those values."""
        if not any(v in values for v, _ in self.coefs):
            return self
        return Affine(tuple((v, c) for v, c in self.coefs if v not in values),
                      self.const + sum(c * values[v] for v, c in self.coefs if v in values))

    def __str__(self) -> str:
        parts = []
        for v, c in self.coefs:
            term = v if abs(c) == 1 else f"{v}*{abs(c)}"
            parts.append(("- " if c < 0 else "+ ") + term)
        if self.const or not parts:
            parts.append(("- " if self.const < 0 else "+ ") + str(abs(self.const)))
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]


def parse_affine(node: ast.expr, loop_vars: dict[str, int] | set[str], where: str) -> Affine:
    """Fold an index expression into an Affine, rejecting anything non-affine."""
    coefs, const = _affine_terms(node, loop_vars, where)
    position = loop_vars if isinstance(loop_vars, dict) else {v: i for i, v in enumerate(sorted(loop_vars))}
    ordered = tuple((v, coefs[v]) for v in sorted(coefs, key=position.__getitem__) if coefs[v])
    return Affine(ordered, const)


def _affine_terms(node: ast.expr, loop_vars: set[str], where: str) -> tuple[dict[str, int], int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return {}, node.value
    if isinstance(node, ast.Name):
        if node.id not in loop_vars:
            raise IRError(f"{where}: subscript uses {node.id!r}, which is not a loop variable")
        return {node.id: 1}, 0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        c, k = _affine_terms(node.operand, loop_vars, where)
        sign = -1 if isinstance(node.op, ast.USub) else 1
        return {v: sign * a for v, a in c.items()}, sign * k
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        lc, lk = _affine_terms(node.left, loop_vars, where)
        rc, rk = _affine_terms(node.right, loop_vars, where)
        sign = 1 if isinstance(node.op, ast.Add) else -1
        out = dict(lc)
        for v, a in rc.items():
            out[v] = out.get(v, 0) + sign * a
        return out, lk + sign * rk
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        lc, lk = _affine_terms(node.left, loop_vars, where)
        rc, rk = _affine_terms(node.right, loop_vars, where)
        if lc and rc:
            raise IRError(f"{where}: subscript {ast.unparse(node)!r} is not affine (product of loop variables)")
        scale, (terms, const) = (lk, (rc, rk)) if not lc else (rk, (lc, lk))
        return {v: a * scale for v, a in terms.items()}, const * scale
    raise IRError(f"{where}: subscript {ast.unparse(node)!r} is not affine in the loop variables")
