"""A kernel's iteration domain under its ``where`` condition: which loop points run, counted exactly.

A causal mask says that query ``i`` sees keys ``j <= i`` only; a FlashAttention-style kernel skips
the products above the diagonal, so a bound that charged the whole ``S × S`` box would be beaten
by a factor of two. ``where`` is a conjunction of affine inequalities over the loop variables
(a convex polyhedron intersected with the loop box), and everything that costs a kernel is
counted over its integer points:

* ``count_points``: the iterations that run (S(S+1)/2 for ``j <= i`` over ``i, j < S``);
* ``projection_size``: how many distinct values a subset of the variables takes over the
  domain, which is the footprint of an access whose subscripts are those variables (the
  keys a causal query block reads).

Both are exact: all but one of the constrained variables are enumerated (vectorised), and the
last one's feasible range is solved per row from the inequalities (integer floor and ceiling).
A domain whose enumeration would exceed ``MAX_ROWS`` rows is refused with an ``IRError`` (the
masks people write constrain two or three variables: causal, band, sliding window).
"""
from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from solar_assets.errors import IRError
from solar_assets.ir.affine import Affine, parse_affine

MAX_ROWS = 1 << 25
"""Largest enumeration of all but the last constrained variable (rows × 8 bytes per array)."""


@dataclass(frozen=True)
class Constraint:
    """``const + Σ coef·var <= 0`` over loop variables."""

    coefs: tuple[tuple[str, int], ...]
    const: int

    @property
    def vars(self) -> tuple[str, ...]:
        return tuple(v for v, c in self.coefs if c)

    def __str__(self) -> str:
        terms = " + ".join(f"{c}*{v}" for v, c in self.coefs)
        return f"{terms} + {self.const} <= 0" if terms else f"{self.const} <= 0"


def parse_where(text: str, loop_vars: Sequence[str], where: str) -> tuple[Constraint, ...]:
    """The constraints of a ``where`` text (``'j <= i and i - j < 128'``); IRError naming ``where``
    (the kernel) for anything that is not a conjunction of affine comparisons of loop variables."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise IRError(f"{where}: where {text!r} is not a valid condition: {e.msg}") from None
    clauses = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    names = {v: i for i, v in enumerate(loop_vars)}
    out: list[Constraint] = []
    for clause in clauses:
        if not isinstance(clause, ast.Compare):
            raise IRError(f"{where}: where {text!r}: {ast.unparse(clause)!r} is not a comparison "
                          f"(a condition is comparisons of affine forms joined by 'and')")
        left = clause.left
        for op, right in zip(clause.ops, clause.comparators):
            a = parse_affine(left, names, f"{where} (where)")
            b = parse_affine(right, names, f"{where} (where)")
            diff = a + b.scale(-1)  # a - b
            if isinstance(op, ast.LtE):
                forms = [diff]
            elif isinstance(op, ast.Lt):
                forms = [diff + _const(1)]
            elif isinstance(op, ast.GtE):
                forms = [diff.scale(-1)]
            elif isinstance(op, ast.Gt):
                forms = [diff.scale(-1) + _const(1)]
            elif isinstance(op, ast.Eq):
                forms = [diff, diff.scale(-1)]
            else:
                raise IRError(f"{where}: where {text!r}: only <, <=, >, >= and == are allowed "
                              f"(the domain must stay convex)")
            out += [Constraint(f.coefs, f.const) for f in forms]
            left = right
    return tuple(out)


def _const(c: int):
    return Affine.constant(c)


def constrained_vars(constraints: Sequence[Constraint], extents: Mapping[str, int]) -> list[str]:
    """The loop variables the constraints involve, in loop order."""
    used = {v for c in constraints for v in c.vars}
    return [v for v in extents if v in used]


def _feasible_ranges(constraints: Sequence[Constraint], extents: Mapping[str, int], outer: list[str],
                     last: str) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Every combination of the ``outer`` variables (arrays of their values, one row each) and,
    per row, the lowest and highest value of ``last`` satisfying every constraint (lo > hi: none)."""
    rows = math.prod(extents[v] for v in outer)
    if rows > MAX_ROWS:
        raise IRError(f"where condition over {', '.join(outer + [last])}: {rows} rows to enumerate "
                      f"(more than {MAX_ROWS})")
    grids = np.meshgrid(*(np.arange(extents[v], dtype=np.int64) for v in outer), indexing="ij") if outer else []
    values = {v: g.reshape(-1) for v, g in zip(outer, grids)}
    n = rows if outer else 1
    lo = np.zeros(n, dtype=np.int64)
    hi = np.full(n, extents[last] - 1, dtype=np.int64)
    ok = np.ones(n, dtype=bool)
    for c in constraints:
        coefs = dict(c.coefs)
        rest = np.full(n, c.const, dtype=np.int64)
        for v, k in coefs.items():
            if v != last:
                rest = rest + k * values[v]
        k = coefs.get(last, 0)
        if k == 0:
            ok &= rest <= 0
        elif k > 0:  # k·y <= -rest  ->  y <= floor(-rest / k)
            hi = np.minimum(hi, np.floor_divide(-rest, k))
        else:  # k·y <= -rest with k < 0  ->  y >= rest / |k|  ->  y >= ceil(rest / |k|) = -floor(-rest / |k|)
            lo = np.maximum(lo, -np.floor_divide(-rest, -k))
    hi = np.where(ok, hi, lo - 1)
    return values, lo, hi


def count_points(constraints: Sequence[Constraint], extents: Mapping[str, int]) -> int:
    """Integer points of the loop box where every constraint holds."""
    if any(e == 0 for e in extents.values()):
        return 0
    vs = constrained_vars(constraints, extents)
    others = math.prod(e for v, e in extents.items() if v not in vs)
    if not vs:
        return others if all(c.const <= 0 for c in constraints) else 0
    _, lo, hi = _feasible_ranges(constraints, extents, vs[:-1], vs[-1])
    return others * int(np.maximum(hi - lo + 1, 0).sum())


def projection_size(constraints: Sequence[Constraint], extents: Mapping[str, int],
                    subset: Sequence[str]) -> int:
    """Distinct value tuples of the loop variables ``subset`` over the points where every
    constraint holds: the footprint of an access whose subscripts are those variables (each plus
    a constant), one element per tuple."""
    if any(e == 0 for e in extents.values()):
        return 0
    vs = constrained_vars(constraints, extents)
    free = math.prod(extents[v] for v in subset if v not in vs)
    inner = [v for v in vs if v in subset]
    points = count_points(constraints, {v: extents[v] for v in vs})  # over the constrained variables
    if points == 0:
        return 0
    if len(inner) == len(vs):
        return free * points
    if not inner:
        return free
    hidden = [v for v in vs if v not in subset]
    if len(hidden) == 1:  # each row of the subset's values is feasible when the last range is non-empty
        _, lo, hi = _feasible_ranges(constraints, extents, inner, hidden[0])
        return free * int(np.count_nonzero(hi >= lo))
    # several hidden variables: enumerate them too (all but the last), and count distinct rows
    values, lo, hi = _feasible_ranges(constraints, extents, [*inner, *hidden[:-1]], hidden[-1])
    keep = hi >= lo
    if not keep.any():
        return 0
    rows = np.stack([values[v][keep] for v in inner], axis=1)
    return free * int(np.unique(rows, axis=0).shape[0])


def feasible_point(constraints: Sequence[Constraint], extents: Mapping[str, int]) -> dict[str, int] | None:
    """One point of the domain (the constrained variables' values), or None when it is empty."""
    if any(e == 0 for e in extents.values()):
        return None
    vs = constrained_vars(constraints, extents)
    if not vs:
        return {} if all(c.const <= 0 for c in constraints) else None
    values, lo, hi = _feasible_ranges(constraints, extents, vs[:-1], vs[-1])
    rows = np.flatnonzero(hi >= lo)
    if rows.size == 0:
        return None
    r = int(rows[0])
    return {**{v: int(values[v][r]) for v in vs[:-1]}, vs[-1]: int(lo[r])}
