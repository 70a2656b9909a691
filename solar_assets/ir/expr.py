"""Parse kernel statements: affine subscripts and value expressions in Python syntax.

Python's own parser does the tokenising; this module whitelists the node kinds so that
an expression is data, never code: nothing here (or anywhere in solar) evaluates it.

A subscript is an ``Affine`` in the loop variables (and the free variables of enclosing
``Repeat`` steps), or an ``Indirect``: a read of an integer tensor with affine subscripts plus
an optional affine offset, ``X[I[n, k] + 1, c]``. The index read is also listed among the
kernel's reads, so dataflow, checks and costs see the index tensor like any other operand.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from ir_schemas import Kernel
from solar_assets.errors import IRError
from solar_assets.ir.access import Access, Indirect, parse_access
from solar_assets.ir.affine import Affine, parse_affine
from solar_assets.ir.interpreter import ExprInterpreter
from solar_assets.ir.scalar_functions import ARITY
from solar_assets.ir.domain import Constraint, count_points, parse_where

# name -> number of arguments, from the one table of scalar functions (``ir.scalar_functions``).
# Each call costs one FLOP (transcendentals included).
SCALAR_FUNCTIONS: dict[str, int] = ARITY
CONSTANT_NAMES = {"inf": float("inf"), "nan": float("nan"), "pi": 3.141592653589793}
BINARY_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
COMPARE_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


@dataclass(frozen=True)
class Dim(Affine):
    """An affine subscript of one tensor dim of extent ``size``, kept to its live terms (nonzero
    coefficient, variable of extent > 1): what the graph's footprints count and the cache-aware
    mapping tiles. ``Dim.of`` builds one from an IR subscript; it is an ``Affine`` throughout."""

    size: int = 1

    @classmethod
    def of(cls, index: Affine, size: int, extents: Mapping[str, int]) -> Dim:
        """``index`` on a dim of ``size``, without the terms that stay 0 over the loop box."""
        return cls(tuple((v, c) for v, c in index.coefs if c and extents[v] > 1), index.const, int(size))

    @cached_property
    def vars(self) -> tuple[str, ...]:  # hot in the mapping search: computed once
        return tuple(v for v, _ in self.coefs)

    def in_range(self, extents: Mapping[str, int]) -> bool:
        """Whether every value over the loop box is a valid index ``0 <= i < size``."""
        lo, hi = self.range(extents)
        return lo >= 0 and hi < self.size


def row_major(dims: Sequence[Dim]) -> Dim:
    """The row-major offset ``Σ stride_d · dims[d]`` of a tuple of subscripts (``stride_d`` the product
    of the later sizes) as one subscript of size ``Π sizes``: one-to-one on in-range tuples, so the
    footprints, the mapping's tile counts and the segments' digit matching count it instead. Terms
    run from the last dim to the first; a variable whose coefficients cancel is dropped."""
    coefs: dict[str, int] = {}
    const, stride = 0, 1
    for d in reversed(dims):
        const += d.const * stride
        for v, c in d.coefs:
            coefs[v] = coefs.get(v, 0) + c * stride
        stride *= d.size
    return Dim(tuple((v, c) for v, c in coefs.items() if c), const, stride)


@dataclass(frozen=True)
class ParsedKernel:
    """A kernel with its statement parsed: what it writes, reads, and computes per iteration."""

    kernel: Kernel
    out: Access
    reads: tuple[Access, ...]
    expr: ast.expr = field(compare=False)
    ops_per_iteration: int  # arithmetic ops in expr, plus one for an accumulating update
    is_sum_of_products: bool  # `+=` of a product of two or more reads: each iteration is one MAC
    free: tuple[str, ...] = ()  # variables of enclosing Repeat steps the subscripts may use
    where: tuple[Constraint, ...] = ()  # the kernel's ``where`` condition: only those iterations run
    where_expr: ast.expr | None = field(default=None, compare=False)  # the condition, for executors

    @property
    def indirect(self) -> bool:
        """Whether the output or any read has an indirect subscript."""
        return self.out.is_indirect or any(a.is_indirect for a in self.reads)

    def box(self, free_extents: dict[str, int] | None = None) -> dict[str, int]:
        """Loop extents plus the free variables' extents (for ranges over a whole repeat)."""
        return {**self.extents, **(free_extents or {})}

    @property
    def extents(self) -> dict[str, int]:
        return {lp.var: lp.extent for lp in self.kernel.loops}

    @property
    def box_iterations(self) -> int:
        """Points of the loop box, run or not (what an executor walks)."""
        n = 1
        for lp in self.kernel.loops:
            n *= lp.extent
        return n

    @cached_property
    def iterations(self) -> int:
        """Iterations that run: the box, or its points where ``where`` holds (``ir.domain``)."""
        if not self.where:
            return self.box_iterations
        return count_points(self.where, self.extents)


def _where(kernel: Kernel) -> str:
    return f"kernel {kernel.name!r}"


def _parse(text: str, where: str, what: str) -> ast.expr:
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise IRError(f"{where}: {what} {text!r} is not a valid expression: {e.msg}") from None


class _Check(ExprInterpreter[int]):
    """The parser's walk: every construct allowed (a whitelist: an expression is data, never
    code), every read collected into ``reads``; the value is the expression's arithmetic op count."""

    def __init__(self, loop_vars: set[str], where: str, reads: list[Access]):
        super().__init__(loop_vars, where)
        self.reads = reads

    def constant(self, value: object) -> int:
        if type(value) not in (int, float, bool):
            raise IRError(f"{self.where}: constant {value!r} is not a number")
        return 0

    def name(self, name: str) -> int:
        if name not in self.loop_vars and name not in CONSTANT_NAMES:
            raise IRError(f"{self.where}: unknown name {name!r} (not a loop variable or constant)")
        return 0

    def read(self, access: Access, node: ast.Subscript) -> int:
        self.reads.append(access)
        self.reads.extend(access.index_reads())
        return 0

    def unary(self, op: ast.unaryop, operand: ast.expr, node: ast.UnaryOp) -> int:
        if not isinstance(op, (ast.USub, ast.UAdd, ast.Not)):
            return self.unsupported(node)
        return self.run(operand) + (1 if isinstance(op, ast.USub) else 0)

    def binary(self, op: ast.operator, left: ast.expr, right: ast.expr, node: ast.BinOp) -> int:
        if type(op) not in BINARY_OPS:
            return self.unsupported(node)
        return 1 + self.run(left) + self.run(right)

    def compare(self, left, ops, comparators, node: ast.Compare) -> int:
        if not all(type(o) in COMPARE_OPS for o in ops):
            return self.unsupported(node)
        return self.run(left) + sum(1 + self.run(c) for c in comparators)

    def boolop(self, op: ast.boolop, values, node: ast.BoolOp) -> int:
        return len(values) - 1 + sum(self.run(v) for v in values)

    def call(self, name: str, args, node: ast.Call) -> int:
        if node.keywords:
            return self.unsupported(node)
        if name not in SCALAR_FUNCTIONS:
            raise IRError(f"{self.where}: unknown scalar function {name!r}; known: {', '.join(sorted(SCALAR_FUNCTIONS))}")
        if len(args) != SCALAR_FUNCTIONS[name]:
            raise IRError(f"{self.where}: {name}() takes {SCALAR_FUNCTIONS[name]} arguments, got {len(args)}")
        return 1 + sum(self.run(a) for a in args)


def _walk_expr(node: ast.expr, loop_vars: set[str], where: str, reads: list[Access]) -> int:
    """Validate the value expression and collect its reads; returns its arithmetic op count."""
    return _Check(loop_vars, where, reads).run(node)


def _product_factors(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _product_factors(node.left) + _product_factors(node.right)
    return [node]


def _is_product(node: ast.expr) -> bool:
    """A product of at least two tensor reads (scaling one read by a constant is no MAC)."""
    return sum(isinstance(f, ast.Subscript) for f in _product_factors(node)) >= 2


@lru_cache(maxsize=65536)
def parse_kernel(kernel: Kernel, free: tuple[str, ...] = ()) -> ParsedKernel:
    """Parse one kernel's statement; raises IRError naming the kernel on any fault.

    ``free`` names the variables of the ``Repeat`` steps around the kernel (outermost first):
    its subscripts may use them like loop variables, but they are not loops of the kernel.
    """
    where = _where(kernel)
    loop_vars = [lp.var for lp in kernel.loops]
    if len(set(loop_vars)) != len(loop_vars):
        raise IRError(f"{where}: loop variables repeat: {loop_vars}")
    clash = set(loop_vars) & (set(SCALAR_FUNCTIONS) | set(CONSTANT_NAMES) | set(free))
    if clash:
        raise IRError(f"{where}: loop variable {sorted(clash)[0]!r} shadows a function, constant or "
                      f"repeat variable name")
    # a dict: membership, and term order for printing (free variables after the loops)
    vars_ = {v: i for i, v in enumerate([*loop_vars, *free])}
    out = parse_access(_parse(kernel.out, where, "output"), vars_, where)
    expr = _parse(kernel.expr, where, "expression")
    reads: list[Access] = []
    ops = _walk_expr(expr, vars_, where, reads)
    reads.extend(out.index_reads())
    accumulating = kernel.update != "="
    where_expr, constraints = None, ()
    if kernel.where is not None:
        constraints = parse_where(kernel.where, loop_vars, where)
        where_expr = _parse(kernel.where, where, "where")
    if kernel.view and (kernel.update != "=" or not isinstance(expr, ast.Subscript) or reads[0].is_indirect
                        or out.is_indirect or constraints):
        raise IRError(f"{where}: a view kernel is one plain read assigned to its output "
                      f"(update '=', no where, no indirect subscript), got {kernel.out} {kernel.update} {kernel.expr}")
    return ParsedKernel(
        kernel=kernel,
        out=out,
        reads=tuple(reads),
        expr=expr,
        ops_per_iteration=ops + (1 if accumulating else 0),
        is_sum_of_products=kernel.update == "+=" and _is_product(expr),
        free=tuple(free),
        where=constraints,
        where_expr=where_expr,
    )
