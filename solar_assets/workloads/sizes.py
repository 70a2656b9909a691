"""A workload's size constants: the integer module-level ``UPPER_CASE`` names it sizes itself with.

KernelBench-style files put their sizes in module constants (``BATCH = 16``, ``DIM = 4096``) and
read them from ``get_inputs()`` / ``get_init_inputs()`` at call time. Rebinding those constants
gives the same program at another size, which is how a workload too big to run is validated at
a smaller one. The file is read with ``ast`` (never executed here); a constant assigned an
integer literal is *free* (it can be rebound), one computed from other constants
(``HIDDEN = 4 * DIM``) is *derived* and follows its inputs when the file is re-executed with
``rebind_constants``.

A file may declare the size it wants to be validated at, which wins over any automatic choice:

    SOLAR_VALIDATION_SIZES = {"BATCH": 3, "SEQ_LEN": 64}
"""
from __future__ import annotations

import ast
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from solar_assets.errors import SolarError

SIZE_DECLARATION = "SOLAR_VALIDATION_SIZES"
CONSTANT_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


class SizeDeclarationError(SolarError):
    """A bad ``SOLAR_VALIDATION_SIZES`` (or constants to rebind); the message names the file."""


@dataclass(frozen=True)
class SizeConstant:
    """One integer module constant of a workload file."""

    name: str
    value: int
    free: bool  # assigned an integer literal: may be rebound; derived constants follow their inputs
    line: int


def _parse(path: str | Path) -> ast.Module:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as e:
        raise SizeDeclarationError(f"{path}: cannot parse the file: {e.msg} (line {e.lineno})") from None


def _int_value(node: ast.expr, known: Mapping[str, int]) -> int | None:
    """The value of an integer constant expression over earlier constants, or None."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _int_value(node.operand, known)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _int_value(node.left, known), _int_value(node.right, known)
        if left is None or right is None or (isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0):
            return None
        if isinstance(node.op, ast.Pow) and not 0 <= right <= 64:
            return None
        return _BINARY[type(node.op)](left, right)
    return None


def _assignments(tree: ast.Module) -> list[tuple[str, ast.expr, int]]:
    """``NAME = value`` / ``NAME: int = value`` statements at module level, in file order."""
    found = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            found.append((stmt.targets[0].id, stmt.value, stmt.lineno))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            found.append((stmt.target.id, stmt.value, stmt.lineno))
    return found


def size_constants(path: str | Path) -> dict[str, SizeConstant]:
    """The file's integer ``UPPER_CASE`` module constants, in file order (the last binding wins)."""
    known: dict[str, int] = {}
    constants: dict[str, SizeConstant] = {}
    for name, value, line in _assignments(_parse(path)):
        if not CONSTANT_NAME.match(name) or name == SIZE_DECLARATION:
            continue
        number = _int_value(value, known)
        if number is None:
            known.pop(name, None)
            constants.pop(name, None)
            continue
        known[name] = number
        constants[name] = SizeConstant(name, number, isinstance(value, ast.Constant), line)
    return constants


def declared_validation_sizes(path: str | Path) -> dict[str, int] | None:
    """The file's ``SOLAR_VALIDATION_SIZES`` (None when it declares none), checked against its constants."""
    tree = _parse(path)
    declared = [(value, line) for name, value, line in _assignments(tree) if name == SIZE_DECLARATION]
    if not declared:
        return None
    value, line = declared[-1]
    try:
        sizes = ast.literal_eval(value)
    except ValueError:
        raise SizeDeclarationError(f"{path}:{line}: {SIZE_DECLARATION} must be a dict literal of "
                                   "constant names to integers, e.g. {\"BATCH\": 3}") from None
    if not isinstance(sizes, dict) or not all(isinstance(k, str) and type(v) is int for k, v in sizes.items()):
        raise SizeDeclarationError(f"{path}:{line}: {SIZE_DECLARATION} must map constant names to integers, "
                                   f"got {sizes!r}")
    check_rebindable(path, sizes, what=f"{SIZE_DECLARATION} (line {line})")
    return dict(sizes)


def check_rebindable(path: str | Path, constants: Mapping[str, int], what: str = "constants") -> None:
    """Every name is an integer module constant of the file and every value is positive (a derived
    constant may be named too: its expression is replaced, and the constants it was computed from
    keep their values)."""
    available = size_constants(path)
    for name, value in constants.items():
        if name not in available:
            free = [c.name for c in available.values() if c.free]
            raise SizeDeclarationError(f"{path}: {what} names {name!r}, which is not an integer module constant "
                                       f"of the file (its constants: {', '.join(free) or 'none'})")
        if value < 1:
            raise SizeDeclarationError(f"{path}: {what} sets {name} = {value}; sizes must be positive")


def rebind_constants(tree: ast.Module, constants: Mapping[str, int]) -> ast.Module:
    """The module with each named constant's assignment replaced by its new value (in place), so
    that constants derived from it are recomputed when the module runs."""
    remaining = dict(constants)
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id in constants and stmt.value is not None:
            stmt.value = ast.copy_location(ast.Constant(int(constants[target.id])), stmt.value)
            remaining.pop(target.id, None)
    if remaining:
        raise SizeDeclarationError(f"no module-level assignment to {', '.join(sorted(remaining))}")
    return tree


def size_label(constants: Mapping[str, int]) -> str:
    """``"full"`` for no rebinding, else ``"BATCH=3,DIM=64"`` (in the order given)."""
    return ",".join(f"{k}={v}" for k, v in constants.items()) if constants else "full"
