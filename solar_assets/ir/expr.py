"""Parse kernel statements: affine subscripts and value expressions in Python syntax.

Python's own parser does the tokenising; this module whitelists the node kinds so that
an expression is data, never code: nothing here (or anywhere in solar) evaluates it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache

from ir_schemas import Kernel
from solar_assets.errors import IRError

# name -> number of arguments. Each call costs one FLOP (transcendentals included).
SCALAR_FUNCTIONS: dict[str, int] = {
    "exp": 1, "log": 1, "tanh": 1, "erf": 1, "sqrt": 1, "rsqrt": 1, "sigmoid": 1,
    "abs": 1, "neg": 1, "sin": 1, "cos": 1, "floor": 1, "ceil": 1, "log1p": 1, "expm1": 1,
    "sign": 1, "reciprocal": 1, "relu": 1,
    "max": 2, "min": 2, "pow": 2, "select": 3,
}
CONSTANT_NAMES = {"inf": float("inf"), "nan": float("nan"), "pi": 3.141592653589793}
BINARY_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
COMPARE_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


@dataclass(frozen=True)
class Affine:
    """``const + Σ coefs[v]·v`` over loop variables, integer coefficients."""

    coefs: tuple[tuple[str, int], ...]
    const: int = 0

    @property
    def vars(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.coefs)

    def coef(self, var: str) -> int:
        return dict(self.coefs).get(var, 0)

    def range(self, extents: dict[str, int]) -> tuple[int, int]:
        """Smallest and largest value over the loop box (every extent ≥ 1)."""
        lo = hi = self.const
        for v, c in self.coefs:
            span = c * (extents[v] - 1)
            lo, hi = lo + min(0, span), hi + max(0, span)
        return lo, hi

    def __str__(self) -> str:
        parts = []
        for v, c in self.coefs:
            term = v if abs(c) == 1 else f"{v}*{abs(c)}"
            parts.append(("- " if c < 0 else "+ ") + term)
        if self.const or not parts:
            parts.append(("- " if self.const < 0 else "+ ") + str(abs(self.const)))
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]


@dataclass(frozen=True)
class Access:
    """A tensor read or write ``tensor[index...]``."""

    tensor: str
    index: tuple[Affine, ...]

    def __str__(self) -> str:
        return f"{self.tensor}[{', '.join(map(str, self.index)) or '()'}]"


@dataclass(frozen=True)
class ParsedKernel:
    """A kernel with its statement parsed: what it writes, reads, and computes per iteration."""

    kernel: Kernel
    out: Access
    reads: tuple[Access, ...]
    expr: ast.expr = field(compare=False)
    ops_per_iteration: int  # arithmetic ops in expr, plus one for an accumulating update
    is_sum_of_products: bool  # `+=` of a product of two or more reads: each iteration is one MAC

    @property
    def extents(self) -> dict[str, int]:
        return {lp.var: lp.extent for lp in self.kernel.loops}

    @property
    def iterations(self) -> int:
        n = 1
        for lp in self.kernel.loops:
            n *= lp.extent
        return n


def _where(kernel: Kernel) -> str:
    return f"kernel {kernel.name!r}"


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


def _parse_access(node: ast.expr, loop_vars: set[str], where: str) -> Access:
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        raise IRError(f"{where}: expected an access like T[i, j], got {ast.unparse(node)!r}")
    sl = node.slice
    items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return Access(node.value.id, tuple(parse_affine(i, loop_vars, where) for i in items))


def _parse(text: str, where: str, what: str) -> ast.expr:
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise IRError(f"{where}: {what} {text!r} is not a valid expression: {e.msg}") from None


def _walk_expr(node: ast.expr, loop_vars: set[str], where: str, reads: list[Access]) -> int:
    """Validate the value expression and collect its reads; returns its arithmetic op count."""
    if isinstance(node, ast.Constant):
        if type(node.value) not in (int, float, bool):
            raise IRError(f"{where}: constant {node.value!r} is not a number")
        return 0
    if isinstance(node, ast.Name):
        if node.id not in loop_vars and node.id not in CONSTANT_NAMES:
            raise IRError(f"{where}: unknown name {node.id!r} (not a loop variable or constant)")
        return 0
    if isinstance(node, ast.Subscript):
        reads.append(_parse_access(node, loop_vars, where))
        return 0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        inner = _walk_expr(node.operand, loop_vars, where, reads)
        return inner + (1 if isinstance(node.op, ast.USub) else 0)
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPS:
        return 1 + _walk_expr(node.left, loop_vars, where, reads) + _walk_expr(node.right, loop_vars, where, reads)
    if isinstance(node, ast.Compare) and all(type(o) in COMPARE_OPS for o in node.ops):
        n = _walk_expr(node.left, loop_vars, where, reads)
        return n + sum(1 + _walk_expr(c, loop_vars, where, reads) for c in node.comparators)
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 1 + sum(_walk_expr(v, loop_vars, where, reads) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = node.func.id
        if name not in SCALAR_FUNCTIONS:
            raise IRError(f"{where}: unknown scalar function {name!r}; known: {', '.join(sorted(SCALAR_FUNCTIONS))}")
        if len(node.args) != SCALAR_FUNCTIONS[name]:
            raise IRError(f"{where}: {name}() takes {SCALAR_FUNCTIONS[name]} arguments, got {len(node.args)}")
        return 1 + sum(_walk_expr(a, loop_vars, where, reads) for a in node.args)
    raise IRError(f"{where}: {type(node).__name__} {ast.unparse(node)!r} is not allowed in a kernel expression")


def _product_factors(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _product_factors(node.left) + _product_factors(node.right)
    return [node]


def _is_product(node: ast.expr) -> bool:
    """A product of at least two tensor reads (scaling one read by a constant is no MAC)."""
    return sum(isinstance(f, ast.Subscript) for f in _product_factors(node)) >= 2


@lru_cache(maxsize=65536)
def parse_kernel(kernel: Kernel) -> ParsedKernel:
    """Parse one kernel's statement; raises IRError naming the kernel on any fault."""
    where = _where(kernel)
    loop_vars = [lp.var for lp in kernel.loops]
    if len(set(loop_vars)) != len(loop_vars):
        raise IRError(f"{where}: loop variables repeat: {loop_vars}")
    clash = set(loop_vars) & (set(SCALAR_FUNCTIONS) | set(CONSTANT_NAMES))
    if clash:
        raise IRError(f"{where}: loop variable {sorted(clash)[0]!r} shadows a function or constant name")
    vars_ = {v: i for i, v in enumerate(loop_vars)}  # a dict: membership, and term order for printing
    out = _parse_access(_parse(kernel.out, where, "output"), vars_, where)
    expr = _parse(kernel.expr, where, "expression")
    reads: list[Access] = []
    ops = _walk_expr(expr, vars_, where, reads)
    accumulating = kernel.update != "="
    return ParsedKernel(
        kernel=kernel,
        out=out,
        reads=tuple(reads),
        expr=expr,
        ops_per_iteration=ops + (1 if accumulating else 0),
        is_sum_of_products=kernel.update == "+=" and _is_product(expr),
    )
