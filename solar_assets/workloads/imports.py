"""The local modules a workload file imports: part of what its results depend on.

A workload may import a helper beside it (``from blocks import Attention``) or from a directory
it adds to ``sys.path``. Those files are found *without running anything*: the file is parsed
with ``ast``, every import in it (at any depth, ``importlib.import_module("x")`` with a literal
name too) is resolved against its folder and against the ``sys.path`` additions it spells out
(``sys.path.insert(0, os.path.join(os.path.dirname(__file__), "lib"))``, ``Path(__file__).parent
/ "lib"``, string literals), and each helper found is read the same way, transitively. A module
that resolves to none of those directories is the installation's (torch, numpy) and is not
followed. A path computed in a way this reader cannot evaluate is not seen: the limitation is
documented in the README ("Caches").
"""
from __future__ import annotations

import ast
import functools
import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_LOCAL_MODULES = 256  # a guard against a directory of thousands of modules


@functools.lru_cache(maxsize=1)
def installed_roots() -> tuple[str, ...]:
    """Directories whose modules are the installation (stdlib, site-packages, solar itself)."""
    import sysconfig

    checkout = Path(__file__).resolve().parents[2]  # solar's own packages, not the checkout's data/
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(checkout / "solar_assets"), str(checkout / "ir_schemas")}
    paths = sysconfig.get_paths()
    roots |= {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots if r))


def is_local_module(module: Any, roots: tuple[str, ...] | None = None) -> bool:
    """A loaded module whose file lies outside the installation: a workload's own helper."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not file:
        return False
    return not os.path.realpath(file).startswith(roots or installed_roots())


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None  # the stage that runs the file reports it


def _eval_path(node: ast.expr, file: Path) -> str | None:
    """The value of a path expression built from ``__file__``, literals, ``os.path`` and
    ``pathlib`` calls; None when it is anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id == "__file__":
        return str(file)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _eval_path(node.value, file)
        return None if inner is None else os.path.dirname(os.path.abspath(inner))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _eval_path(node.left, file), _eval_path(node.right, file)
        return None if left is None or right is None else os.path.join(left, right)
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in ("resolve", "absolute", "expanduser") and isinstance(func, ast.Attribute) and not node.args:
        inner = _eval_path(func.value, file)
        return None if inner is None else os.path.abspath(os.path.expanduser(inner))
    args = [_eval_path(a, file) for a in node.args]
    if any(a is None for a in args) or node.keywords:
        return None
    if name in ("dirname",) and len(args) == 1:
        return os.path.dirname(args[0])
    if name in ("abspath", "realpath", "normpath", "expanduser", "str", "fspath") and len(args) == 1:
        return os.path.abspath(os.path.expanduser(args[0]))
    if name == "join" and args:
        return os.path.join(*args)
    if name in ("Path", "PurePath") and args:
        return os.path.join(*args)
    return None


@dataclass(frozen=True)
class References:
    """What a parsed file refers to, from one walk of its tree."""

    names: list[tuple[str, Path | None]]  # every import: (dotted name, base of a relative import or None)
    added: list[Path]  # directories it adds with sys.path.insert/append/extend or site.addsitedir
    imported: frozenset[str]  # top-level packages of its absolute import statements (torch, jax)
    defined: frozenset[str]  # its module-level functions and classes


def references(tree: ast.Module, file: Path) -> References:
    """The file's ``References`` (``file``: where ``__file__`` and relative imports point)."""
    names: list[tuple[str, Path | None]] = []
    added: list[Path] = []
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(a.name, None) for a in node.names]
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
            base = None
            if node.level:
                base = file.parent
                for _ in range(node.level - 1):
                    base = base.parent
            module = node.module or ""
            if module:
                names.append((module, base))
            names += [(f"{module}.{a.name}" if module else a.name, base) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call):
            func = node.func
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if called in ("import_module", "__import__"):
                    names.append((node.args[0].value, None))
            if isinstance(func, ast.Attribute):
                added += _added_by(node, func, file)
    defined = frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
    return References(names, added, frozenset(imported), defined)


def _added_by(node: ast.Call, func: ast.Attribute, file: Path) -> list[Path]:
    """The directories one ``sys.path.insert/append/extend`` or ``site.addsitedir`` call adds."""
    target, method = func.value, func.attr
    values: list[ast.expr] = []
    if method in ("insert", "append") and isinstance(target, ast.Attribute) and target.attr == "path":
        values = node.args[-1:]
    elif method == "extend" and isinstance(target, ast.Attribute) and target.attr == "path" and node.args \
            and isinstance(node.args[0], (ast.List, ast.Tuple)):
        values = list(node.args[0].elts)
    elif method == "addsitedir":
        values = node.args[:1]
    added = []
    for value in values:
        path = _eval_path(value, file)
        if path is not None:
            added.append(Path(path) if os.path.isabs(path) else Path.cwd() / path)
    return added


def _resolve(name: str, root: Path) -> list[Path]:
    """The files importing ``name`` from ``root`` runs: each package's ``__init__.py`` and the module."""
    found, here = [], root
    for part in name.split("."):
        if not part:
            return found
        package, module = here / part / "__init__.py", here / f"{part}.py"
        if package.is_file():
            found.append(package)
            here = here / part
        elif module.is_file():
            found.append(module)
            break
        else:
            break
    return found


def local_modules(path: str | Path, own: References | None = None) -> list[Path]:
    """The Python files ``path`` imports from its folder or from directories it adds to
    ``sys.path``, transitively, sorted (the file itself not included). ``own``: the file's
    ``references(tree, Path(path).resolve())``, where the caller has them."""
    path = Path(path).resolve()
    installed = installed_roots()
    roots: list[Path] = [path.parent]
    seen: set[Path] = {path}
    todo = [path]
    while todo and len(seen) <= MAX_LOCAL_MODULES:
        file = todo.pop()
        if file == path and own is not None:
            refs = own
        else:
            tree = _parse(file)
            if tree is None:
                continue
            refs = references(tree, file)
        roots += [r for r in refs.added if r not in roots]
        for name, base in refs.names:
            for root in ([base] if base is not None else [file.parent, *roots]):
                for found in _resolve(name, root):
                    found = found.resolve()
                    if found not in seen and not str(found).startswith(installed):
                        seen.add(found)
                        todo.append(found)
    return sorted(seen - {path})


def local_modules_sha256(path: str | Path, own: References | None = None) -> str:
    """A digest of every local module's path and bytes; "" when the file imports none."""
    modules = local_modules(path, own)
    if not modules:
        return ""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(str(module).encode() + b"\0")
        try:
            digest.update(module.read_bytes())
        except OSError:
            digest.update(b"<unreadable>")
        digest.update(b"\0")
    return digest.hexdigest()
