"""A workload's size constants: the integer module-level names it sizes itself with.

KernelBench-style files put their sizes in module constants and read them from ``get_inputs()`` /
``get_init_inputs()`` at call time, spelled many ways: ``BATCH = 16``, ``batch_size = 16``,
``N = 2048 * 2``, ``M = K = N = 8192``, ``height, width = 256, 256``, ``input_shape = (32768,)``,
``layer_sizes = [400, 800]``. Rebinding those constants gives the same program at another size,
which is how a workload too big to run is validated at a smaller one. The file is read with
``ast`` (never executed here). Every module-level name bound to an integer expression is a
constant, and so is every integer element of a tuple or list literal, named ``input_shape[0]``.
A constant whose expression uses no other name (``16``, ``2048 * 2``) is *free* (it can be
rebound); one computed from other constants (``HIDDEN = 4 * DIM``, ``(out_channels, 1, 1)[0]``)
is *derived* and follows its inputs when the file is re-executed with ``rebind_constants``.
Which constants are sizes at all (not a reduction axis ``dim = 1``, a kernel size, a group
count) is decided by the sizing search (``solar_assets.sizing``), not here.

A file may declare the size it wants to be validated at, which wins over any automatic choice:

    SOLAR_VALIDATION_SIZES = {"batch_size": 3, "seq_len": 64, "input_shape[0]": 7}
"""
from __future__ import annotations

import ast
import operator
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from solar_assets.errors import SolarError

SIZE_DECLARATION = "SOLAR_VALIDATION_SIZES"
ELEMENT_NAME = re.compile(r"^([A-Za-z_]\w*)\[(\d+)\]$")  # "input_shape[0]": element 0 of a tuple/list

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


class SizeDeclarationError(SolarError):
    """A bad ``SOLAR_VALIDATION_SIZES`` (or constants to rebind); the message names the file."""


@dataclass(frozen=True)
class SizeConstant:
    """One integer module constant of a workload file (or one integer element of a tuple / list
    constant, named ``name[i]``)."""

    name: str
    value: int
    free: bool  # a literal expression (no other name in it): may be rebound; derived ones follow their inputs
    line: int

    @property
    def base(self) -> str:
        """The module-level name bound: ``input_shape`` for ``input_shape[0]``."""
        match = ELEMENT_NAME.match(self.name)
        return match.group(1) if match else self.name


def element_name(name: str, index: int) -> str:
    return f"{name}[{index}]"


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
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant) \
            and type(node.slice.value) is int:
        return known.get(element_name(node.value.id, node.slice.value))
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


def _is_literal(node: ast.expr) -> bool:
    """No name in the expression: ``16``, ``2048 * 2`` (free), not ``4 * DIM`` (derived)."""
    return not any(isinstance(n, ast.Name) for n in ast.walk(node))


def _bindings(stmt: ast.stmt) -> list[tuple[str, ast.expr]]:
    """The (name, value) pairs one module-level statement binds: ``NAME = v``, ``NAME: int = v``,
    chained ``M = K = N = v`` and unpacked ``height, width = 256, 256``."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [(stmt.target.id, stmt.value)]
    if not isinstance(stmt, ast.Assign):
        return []
    found = []
    for target in stmt.targets:
        if isinstance(target, ast.Name):
            found.append((target.id, stmt.value))
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(stmt.value.elts):
            found.extend((t.id, v) for t, v in zip(target.elts, stmt.value.elts) if isinstance(t, ast.Name))
    return found


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Every module-level name a statement (re)binds, whatever its value."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _assignments(tree: ast.Module) -> Iterator[tuple[str, ast.expr, int]]:
    """(name, value, line) of every module-level binding, in file order."""
    for stmt in tree.body:
        for name, value in _bindings(stmt):
            yield name, value, stmt.lineno


def size_constants(path: str | Path) -> dict[str, SizeConstant]:
    """The file's integer module constants and integer elements of tuple / list constants, in file
    order (the last binding wins)."""
    known: dict[str, int] = {}
    constants: dict[str, SizeConstant] = {}
    for stmt in _parse(path).body:
        for name in _bound_names(stmt):  # a rebinding forgets what the name was
            for key in [k for k in constants if constants[k].base == name]:
                known.pop(key, None)
                constants.pop(key, None)
        for name, value in _bindings(stmt):
            if name == SIZE_DECLARATION:
                continue
            if isinstance(value, (ast.Tuple, ast.List)):
                for i, elt in enumerate(value.elts):
                    number = _int_value(elt, known)
                    if number is not None:
                        key = element_name(name, i)
                        known[key] = number
                        constants[key] = SizeConstant(key, number, _is_literal(elt), stmt.lineno)
                continue
            number = _int_value(value, known)
            if number is not None:
                known[name] = number
                constants[name] = SizeConstant(name, number, _is_literal(value), stmt.lineno)
    return constants


def declared_validation_sizes(path: str | Path) -> dict[str, int] | None:
    """The file's ``SOLAR_VALIDATION_SIZES`` (None when it declares none), checked against its
    constants. A tuple / list constant may be given whole (``"input_shape": (7,)``) or by element
    (``"input_shape[0]": 7``)."""
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
    if not isinstance(sizes, dict) or not all(isinstance(k, str) for k in sizes):
        raise SizeDeclarationError(f"{path}:{line}: {SIZE_DECLARATION} must map constant names to integers, "
                                   f"got {sizes!r}")
    flat: dict[str, int] = {}
    for key, v in sizes.items():
        if isinstance(v, (tuple, list)) and all(type(x) is int for x in v):
            flat.update((element_name(key, i), x) for i, x in enumerate(v))
        elif type(v) is int:
            flat[key] = v
        else:
            raise SizeDeclarationError(f"{path}:{line}: {SIZE_DECLARATION} must map constant names to integers "
                                       f"(or tuples of them), got {key!r}: {v!r}")
    check_rebindable(path, flat, what=f"{SIZE_DECLARATION} (line {line})")
    return flat


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


def _rebinding(name: str, new: Mapping[int | None, int], value: ast.expr, at: ast.stmt) -> ast.stmt:
    """``name = new`` or, for elements, ``name = (name[0], NEW, name[2])`` (a list stays a list)."""
    if None in new:
        expr: ast.expr = ast.Constant(int(new[None]))
    else:
        elts = [ast.Constant(int(new[i])) if i in new else
                ast.Subscript(ast.Name(name, ast.Load()), ast.Constant(i), ast.Load())
                for i in range(len(value.elts))]  # type: ignore[attr-defined]
        expr = (ast.List if isinstance(value, ast.List) else ast.Tuple)(elts, ast.Load())
    stmt = ast.Assign([ast.Name(name, ast.Store())], expr)
    return ast.fix_missing_locations(ast.copy_location(stmt, at))


def rebind_constants(tree: ast.Module, constants: Mapping[str, int]) -> ast.Module:
    """The module with each named constant rebound (in place): a new assignment right after the
    statement that last binds it (``M = K = N = 8192`` keeps ``K`` and ``N`` when only ``M`` is
    rebound; ``input_shape[0]`` rebuilds the tuple with that element replaced), so that constants
    derived from it later in the file are recomputed when the module runs."""
    wanted: dict[str, dict[int | None, int]] = {}
    for key, v in constants.items():
        match = ELEMENT_NAME.match(key)
        base, index = (match.group(1), int(match.group(2))) if match else (key, None)
        wanted.setdefault(base, {})[index] = v
    last: dict[str, tuple[int, ast.expr]] = {}
    for i, stmt in enumerate(tree.body):
        for name, value in _bindings(stmt):
            if name in wanted:
                last[name] = (i, value)
    missing = [n for n in wanted if n not in last or
               (None not in wanted[n] and not isinstance(last[n][1], (ast.Tuple, ast.List)))]
    if missing:
        raise SizeDeclarationError(f"no module-level assignment to {', '.join(sorted(missing))}")
    for name in sorted(last, key=lambda n: -last[n][0]):  # from the end, so earlier indices hold
        i, value = last[name]
        tree.body.insert(i + 1, _rebinding(name, wanted[name], value, tree.body[i]))
    return tree


def size_label(constants: Mapping[str, int]) -> str:
    """``"full"`` for no rebinding, else ``"BATCH=3,DIM=64"`` (in the order given)."""
    return ",".join(f"{k}={v}" for k, v in constants.items()) if constants else "full"
