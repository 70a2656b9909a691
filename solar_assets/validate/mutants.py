"""Single-point mutants of a program: the translation bugs validation exists to catch.

A translation bug that survives validation yields a bound for a different computation. These
operators plant the bugs a tracer or an LLM makes — an index off by one, a loop one iteration
short, two index variables swapped, a wrong stride or scale, a term dropped or doubled, a wrong
start value of a reduction or pad, a mask shifted by one — one at a time into a checked program,
so ``bench/mutation.py`` can measure how many validation rejects (the mutation score) and
``tests/test_mutants.py`` can pin that each kind is rejected with a diagnostic naming the output.

Each mutant is addressed by ``(kind, step name, site)``; ``apply_mutant`` plants the same
mutant in the same program traced at another size, which is how a survivor is tested for
equivalence (identical outputs at two further sizes).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from ir_schemas import Kernel, Loop, Program
from solar_assets.ir import parse_kernel

KINDS = ("index", "bound", "swap", "constant", "drop_term", "dup_term", "init", "mask")
"""index: ±1 on a subscript; bound: a loop one iteration short; swap: two subscripts of one access
exchanged; constant: a stride coefficient or a numeric constant changed; drop_term / dup_term: one
operand of a sum dropped or doubled; init: a reduction or pad starting from the wrong value
(0 ↔ −inf); mask: a condition's bound shifted by one."""


@dataclass(frozen=True)
class Mutant:
    kind: str
    step: str  # the kernel's name
    site: int  # which of the kernel's sites of this kind
    description: str
    program: Program


def _sites(kernel: Kernel, program: Program, kind: str) -> list[tuple[str, object]]:
    """(description, change) for every place ``kind`` can mutate ``kernel``; a change is applied by
    ``_change``."""
    expr = ast.parse(kernel.expr, mode="eval")
    out_node = ast.parse(kernel.out, mode="eval").body
    sites: list[tuple[str, object]] = []
    subscripts = [n for n in ast.walk(expr) if isinstance(n, ast.Subscript)]
    if kind == "index":
        for si, sub in enumerate([out_node, *subscripts]):
            elts = _elts(sub)
            for d, e in enumerate(elts):
                if any(isinstance(n, ast.Name) for n in ast.walk(e)):
                    for delta in (1, -1):
                        sites.append((f"{_name(sub)} subscript {d} {delta:+d}", ("index", si, d, delta)))
    elif kind == "bound":
        for li, lp in enumerate(kernel.loops):
            if lp.extent > 1:
                sites.append((f"loop {lp.var} to {lp.extent - 1}", ("bound", li)))
    elif kind == "swap":
        for si, sub in enumerate([out_node, *subscripts]):
            elts = _elts(sub)
            names = [e.id if isinstance(e, ast.Name) else None for e in elts]
            for a in range(len(elts)):
                for b in range(a + 1, len(elts)):
                    if names[a] and names[b] and names[a] != names[b]:
                        sites.append((f"{_name(sub)} subscripts {a}, {b} swapped", ("swap", si, a, b)))
    elif kind == "constant":
        for si, sub in enumerate([out_node, *subscripts]):
            for d, e in enumerate(_elts(sub)):
                for n in ast.walk(e):
                    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and \
                            any(isinstance(x, ast.Constant) and isinstance(x.value, int) and x.value > 1
                                for x in (n.left, n.right)):
                        sites.append((f"{_name(sub)} subscript {d} stride -1", ("stride", si, d)))
                        break
        for ci, c in enumerate(_numbers(expr)):
            sites.append((f"constant {c.value!r} changed", ("number", ci)))
    elif kind in ("drop_term", "dup_term"):
        for bi, node in enumerate(_sums(expr)):
            for side in ("left", "right"):
                verb = "dropped" if kind == "drop_term" else "doubled"
                sites.append((f"{side} term of {ast.unparse(node)[:40]!r} {verb}", (kind, bi, side)))
    elif kind == "init":
        if kernel.update in ("max=", "min=") and kernel.init == "identity":
            sites.append(("reduction starts from 0", ("init_zero",)))
        if kernel.update == "+=" and kernel.init == "identity":
            sites.append(("sum starts from 1", ("init_one",)))
        tensors = program.tensor_map()
        for acc in parse_kernel(kernel).reads:
            pad = tensors[acc.tensor].pad_value
            if pad is not None:
                sites.append((f"pad of {acc.tensor} {pad:g} -> {0.0 if pad != 0 else float('-inf')}",
                               ("pad", acc.tensor)))
    elif kind == "mask":
        if kernel.where:
            for delta in (1, -1):
                sites.append((f"where {kernel.where!r} shifted {delta:+d}", ("where", delta)))
        for ci, _ in enumerate(n for n in ast.walk(expr) if isinstance(n, ast.Compare)):
            sites.append(("comparison made strict/non-strict", ("compare", ci)))
    return sites


def _elts(sub: ast.AST) -> list[ast.expr]:
    s = sub.slice
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


def _name(sub: ast.AST) -> str:
    return sub.value.id if isinstance(sub.value, ast.Name) else "?"


def _numbers(expr: ast.AST) -> list[ast.Constant]:
    """Numeric constants outside subscripts (scales, offsets, epsilons)."""
    inside = {id(n) for sub in ast.walk(expr) if isinstance(sub, ast.Subscript) for n in ast.walk(sub.slice)}
    return [n for n in ast.walk(expr) if isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
            and not isinstance(n.value, bool) and id(n) not in inside]


def _sums(expr: ast.AST) -> list[ast.BinOp]:
    inside = {id(n) for sub in ast.walk(expr) if isinstance(sub, ast.Subscript) for n in ast.walk(sub.slice)}
    return [n for n in ast.walk(expr) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub))
            and id(n) not in inside]


def _change(kernel: Kernel, program: Program, change: tuple) -> tuple[Kernel, Program]:
    """``kernel`` (and ``program``, for a pad value) with ``change`` applied."""
    what = change[0]
    expr = ast.parse(kernel.expr, mode="eval")
    out = ast.parse(kernel.out, mode="eval")
    subscripts = [out.body, *[n for n in ast.walk(expr) if isinstance(n, ast.Subscript)]]
    update: dict[str, object] = {}
    if what in ("index", "swap", "stride"):
        sub = subscripts[change[1]]
        elts = _elts(sub)
        if what == "index":
            elts[change[2]] = ast.BinOp(elts[change[2]], ast.Add(), ast.Constant(change[3]))
        elif what == "swap":
            elts[change[2]], elts[change[3]] = elts[change[3]], elts[change[2]]
        else:
            for n in ast.walk(elts[change[2]]):
                if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
                    c = n.left if isinstance(n.left, ast.Constant) else n.right
                    c.value -= 1
                    break
        sub.slice = ast.Tuple(elts, ast.Load()) if len(elts) > 1 else elts[0]
    elif what == "bound":
        loops = list(kernel.loops)
        lp = loops[change[1]]
        loops[change[1]] = Loop(var=lp.var, extent=lp.extent - 1)
        update["loops"] = tuple(loops)
    elif what == "number":
        c = _numbers(expr)[change[1]]
        c.value = c.value + 1 if isinstance(c.value, int) else (c.value * 1.5 if c.value else 1.0)
    elif what in ("drop_term", "dup_term"):
        node = _sums(expr)[change[1]]
        keep = node.left if change[2] == "right" else node.right
        if what == "drop_term":
            replacement = keep if change[2] == "right" or isinstance(node.op, ast.Add) else \
                ast.UnaryOp(ast.USub(), keep)
        else:
            doubled = node.right if change[2] == "right" else node.left
            replacement = ast.BinOp(node, ast.Add() if change[2] == "left" or isinstance(node.op, ast.Add)
                                    else ast.Sub(), doubled)
        expr = _replace(expr, node, replacement)
    elif what == "init_zero":  # max= from 0 instead of -inf: max over the values and 0
        fn = "max" if kernel.update == "max=" else "min"
        expr = ast.Expression(ast.Call(ast.Name(fn, ast.Load()), [expr.body, ast.Constant(0.0)], []))
    elif what == "init_one":
        expr = ast.Expression(ast.BinOp(expr.body, ast.Add(), ast.Constant(1.0 / _reduction_length(kernel))))
    elif what == "pad":
        decls = []
        for t in program.tensors:
            if t.name == change[1]:
                t = t.model_copy(update={"pad_value": 0.0 if t.pad_value != 0 else float("-inf")})
            decls.append(t)
        program = program.model_copy(update={"tensors": tuple(decls)})
    elif what == "where":
        update["where"] = _shift_where(kernel.where, change[1])
    elif what == "compare":
        cmp = [n for n in ast.walk(expr) if isinstance(n, ast.Compare)][change[1]]
        flip = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                ast.NotEq: ast.Eq}
        cmp.ops = [flip[type(cmp.ops[0])](), *cmp.ops[1:]]
    update.setdefault("expr", ast.unparse(expr))
    update.setdefault("out", ast.unparse(out))
    return kernel.model_copy(update=update), program


def _reduction_length(kernel: Kernel) -> int:
    """Iterations summed into each output element (so ``+ 1/n`` per term adds 1 to each sum)."""
    pk = parse_kernel(kernel)
    out_vars = {v for a in pk.out.index for v, c in getattr(a, "coefs", ()) if c}
    n = 1
    for lp in kernel.loops:
        if lp.var not in out_vars:
            n *= lp.extent
    return n


def _replace(tree: ast.Expression, old: ast.AST, new: ast.AST) -> ast.Expression:
    class Swap(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            return new if node is old else self.generic_visit(node)

    return Swap().visit(tree)


def _shift_where(where: str, delta: int) -> str:
    """The first comparison's right side moved by ``delta`` (``j <= i`` -> ``j <= i + 1``)."""
    tree = ast.parse(where, mode="eval").body
    first = tree.values[0] if isinstance(tree, ast.BoolOp) else tree
    first.comparators[0] = ast.BinOp(first.comparators[0], ast.Add(), ast.Constant(delta))
    return ast.unparse(tree)


def spread(items: list, at_most: int | None) -> list:
    """At most ``at_most`` of ``items``, evenly spread over the list (all of them when None)."""
    if at_most is None or len(items) <= at_most:
        return items
    step = len(items) / at_most
    return [items[int(i * step)] for i in range(at_most)]


def mutants(program: Program, kinds: tuple[str, ...] = KINDS, per_kernel: int | None = None) -> Iterator[Mutant]:
    """Every single-point mutant of the program's top-level kernels, by kind (at most
    ``per_kernel`` sites per kind and kernel, spread over the sites, when given). View kernels
    are skipped: they execute as copies but a view's output is the value of its source."""
    for kind in kinds:
        for step in program.steps:
            if not isinstance(step, Kernel) or step.view:
                continue
            sites = _sites(step, program, kind)
            for site, (description, change) in enumerate(spread(sites, per_kernel)):
                yield Mutant(kind, step.name, site, description, _planted(program, step, change))


def _planted(program: Program, kernel: Kernel, change: tuple) -> Program:
    new_kernel, program = _change(kernel, program, change)
    steps = tuple(new_kernel if st is kernel or getattr(st, "name", None) == kernel.name else st
                  for st in program.steps)
    return program.model_copy(update={"steps": steps})


def apply_mutant(program: Program, kind: str, step: str, site: int, per_kernel: int | None = None) -> Program | None:
    """The mutant ``(kind, step, site)`` planted in ``program`` (the same workload traced at
    another size); None when that site does not exist there."""
    kernel = next((st for st in program.steps if isinstance(st, Kernel) and st.name == step), None)
    if kernel is None:
        return None
    sites = spread(_sites(kernel, program, kind), per_kernel)
    if site >= len(sites):
        return None
    return _planted(program, kernel, sites[site][1])
