"""One walk over a kernel's value expression, for every analysis of it.

A kernel's ``expr`` is a Python expression AST (``ir.expr``): constants, loop variables and named
constants, tensor reads ``T[i, j + 1]``, arithmetic, comparisons, boolean operators and calls of
the scalar functions (``ir.scalar_functions``). Three things read it: the parser's check (is every
construct allowed, and how many FLOPs is it), the numba code generator (Python source) and the
point evaluator (float64 arrays). Each used to walk the tree itself; now each subclasses
``ExprInterpreter``, as analyses of an fx graph subclass ``torch.fx.Interpreter``: the walk and the
parse of a read's subscripts are here, once, and a subclass says what each construct means by
overriding one method per construct. Hooks receive the child nodes, not their values, so a
subclass decides the order and whether to evaluate them (the generator hoists repeated operands
and writes ``select``'s condition as a branch).
"""
from __future__ import annotations

import ast
from collections.abc import Collection, Sequence
from typing import Generic, TypeVar

from solar_assets.errors import IRError
from solar_assets.ir.access import Access, parse_access

V = TypeVar("V")


class ExprInterpreter(Generic[V]):
    """Dispatch on the expression's constructs; ``run(node)`` is the value of ``node``.

    ``loop_vars``: the names a subscript may use (the kernel's loop variables and the free
    variables of an enclosing repeat); ``where`` names the kernel in errors."""

    def __init__(self, loop_vars: Collection[str], where: str):
        self.loop_vars = loop_vars
        self.where = where

    def run(self, node: ast.expr) -> V:
        if isinstance(node, ast.Constant):
            return self.constant(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Subscript):
            return self.read(self.parse_read(node), node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node.op, node.operand, node)
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, node.left, node.right, node)
        if isinstance(node, ast.Compare):
            return self.compare(node.left, node.ops, node.comparators, node)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node.op, node.values, node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.call(node.func.id, node.args, node)
        return self.unsupported(node)

    def parse_read(self, node: ast.Subscript) -> Access:
        """The read ``T[...]`` with its affine (or indirect) subscripts parsed."""
        return parse_access(node, self.loop_vars, self.where)

    # ------------------------------------------------------------------ one hook per construct
    def constant(self, value: object) -> V:
        return self.unsupported(ast.Constant(value))

    def name(self, name: str) -> V:
        return self.unsupported(ast.Name(name))

    def read(self, access: Access, node: ast.Subscript) -> V:
        return self.unsupported(node)

    def unary(self, op: ast.unaryop, operand: ast.expr, node: ast.UnaryOp) -> V:
        return self.unsupported(node)

    def binary(self, op: ast.operator, left: ast.expr, right: ast.expr, node: ast.BinOp) -> V:
        return self.unsupported(node)

    def compare(self, left: ast.expr, ops: Sequence[ast.cmpop], comparators: Sequence[ast.expr],
                node: ast.Compare) -> V:
        return self.unsupported(node)

    def boolop(self, op: ast.boolop, values: Sequence[ast.expr], node: ast.BoolOp) -> V:
        return self.unsupported(node)

    def call(self, name: str, args: Sequence[ast.expr], node: ast.Call) -> V:
        return self.unsupported(node)

    def unsupported(self, node: ast.expr) -> V:
        raise IRError(f"{self.where}: {type(node).__name__} {ast.unparse(node)!r} is not allowed in a kernel expression")
