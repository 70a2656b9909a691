"""No package cycles: each package imports alone, and the import graph between packages is a DAG.

The graph is read from the sources with ``ast`` (module-level imports, imports inside functions
and ``TYPE_CHECKING`` imports alike: a lazy import is still a dependency) and collapsed to one
node per package of ``solar_assets`` (``solar_assets.graph``, ``solar_assets.chain``, …; a
top-level module such as ``solar_assets.errors`` is its own node). One node is not one
directory, on purpose, and is the whole allowlist:

- ``IR``: ``ir_schemas`` (the schema) and ``solar_assets.ir`` (expression grammar, printer,
  checker, structure) are one package, the IR, at the bottom; the printer reads the schema
  (the schema does not call the printer: no file-level circle either, ``module_graph``).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("solar_assets", "ir_schemas")
# (prefix of a dotted module name, node): the first prefix that matches decides.
MERGED = (
    (("ir_schemas",), "IR"),
    (("solar_assets", "ir"), "IR"),
)
# Nothing of the stages may be imported by the IR: it is the bottom of the package.
IR_MAY_IMPORT = {"solar_assets.errors", "solar_assets"}


def node_of(module: str) -> str | None:
    parts = tuple(module.split("."))
    if parts[0] not in ROOTS:
        return None
    for prefix, node in MERGED:
        if parts[:len(prefix)] == prefix:
            return node
    return ".".join(parts[:2])


def _module_name(path: Path) -> tuple[str, str]:
    """(module, package it sits in) of a source file."""
    parts = path.relative_to(REPO).with_suffix("").parts
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    return ".".join(parts), ".".join(parts[:-1])


def _is_module(dotted: str) -> bool:
    base = REPO.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imported_modules(path: Path) -> list[tuple[str, int]]:
    """Every module a source file imports, with the line: ``import a.b``, ``from a import b``
    (``a.b`` where that is a module, else ``a``), relative imports resolved."""
    _, package = _module_name(path)
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}"
                out.append((full if _is_module(full) else module, node.lineno))
    return out


def package_graph() -> dict[str, dict[str, list[str]]]:
    """node -> imported node -> the ``file:line`` places that import it."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            here = node_of(_module_name(path)[0])
            for module, line in imported_modules(path):
                there = node_of(module)
                if there is not None and there != here:
                    edges[here][there].append(f"{path.relative_to(REPO)}:{line}")
    return edges


def cycles(edges: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    nodes = set(edges) | {w for targets in edges.values() for w in targets}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def test_the_package_graph_has_no_cycle():
    edges = package_graph()
    found = cycles(edges)
    lines = [f"{a} -> {b} ({', '.join(edges[a][b][:3])})" for c in found for a in c for b in c if b in edges.get(a, {})]
    assert not found, "package cycles:\n" + "\n".join(lines)


def module_graph() -> dict[str, dict[str, list[str]]]:
    """module -> imported module (a file, or a package's ``__init__``) -> the ``file:line`` places."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            here = _module_name(path)[0]
            for module, line in imported_modules(path):
                if module.split(".")[0] in ROOTS and module != here and _is_module(module):
                    edges[here][module].append(f"{path.relative_to(REPO)}:{line}")
    return edges


def test_no_file_imports_itself_round_a_circle():
    """File-level circles, which the package graph above cannot see inside one package (the
    schema's ``__str__`` calling the printer that reads the schema; node-wise's JAX half importing
    the PyTorch half that dispatches to it; Dagster's runner and its one-call run): none."""
    edges = module_graph()
    found = cycles(edges)
    lines = [f"{a} -> {b} ({', '.join(edges[a][b][:2])})" for c in found for a in c for b in c if b in edges.get(a, {})]
    assert not found, "file-level cycles:\n" + "\n".join(lines)


def test_the_file_graph_sees_a_planted_circle(tmp_path, monkeypatch):
    pkg = tmp_path / "solar_assets" / "demo"
    pkg.mkdir(parents=True)
    (tmp_path / "solar_assets" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from solar_assets.demo import b\n")
    (pkg / "b.py").write_text("def f():\n    from solar_assets.demo.a import g\n")
    (pkg / "c.py").write_text("from solar_assets.demo import a\n")
    (tmp_path / "ir_schemas").mkdir()
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert cycles(module_graph()) == [["solar_assets.demo.a", "solar_assets.demo.b"]]


def test_the_ir_imports_nothing_of_the_stages():
    edges = package_graph()
    assert set(edges.get("IR", {})) <= IR_MAY_IMPORT, dict(edges["IR"])


def test_the_cycle_finder_finds_a_planted_cycle():
    """The checker itself: a two-node and a three-node cycle beside an acyclic part."""
    edges = {"a": {"b": []}, "b": {"a": []}, "c": {"d": []}, "d": {"e": []}, "e": {"c": []}, "f": {"a": []}}
    assert sorted(cycles(edges)) == [["a", "b"], ["c", "d", "e"]]
    assert cycles({"a": {"b": []}, "b": {"c": []}}) == []


def test_function_level_relative_and_type_checking_imports_are_read(tmp_path, monkeypatch):
    """An import inside a function or under ``TYPE_CHECKING`` is an edge like one at the top
    (function-level imports hid four cycles before)."""
    pkg = tmp_path / "solar_assets" / "demo"
    pkg.mkdir(parents=True)
    (tmp_path / "solar_assets" / "__init__.py").write_text("")
    (tmp_path / "solar_assets" / "errors.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("")
    (pkg / "mod.py").write_text("from typing import TYPE_CHECKING\n"
                                "if TYPE_CHECKING:\n    from solar_assets.graph import EinsumGraph\n"
                                "def f():\n    from . import helper\n    from ..errors import SolarError\n"
                                "    import solar_assets.report.rows\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert sorted(m for m, _ in imported_modules(pkg / "mod.py")) == [
        "solar_assets.demo.helper", "solar_assets.errors", "solar_assets.graph", "solar_assets.report.rows", "typing"]


def _packages() -> list[str]:
    names = ["ir_schemas", "solar_assets"]
    for p in sorted((REPO / "solar_assets").iterdir()):
        if (p / "__init__.py").is_file():
            names.append(f"solar_assets.{p.name}")
        elif p.suffix == ".py" and p.stem not in ("__init__", "__main__"):
            names.append(f"solar_assets.{p.stem}")
    return names


@pytest.mark.slow
@pytest.mark.parametrize("package", _packages())
def test_each_package_imports_alone(package):
    """In a fresh interpreter, so no earlier import can hide an ordering problem."""
    done = subprocess.run([sys.executable, "-c", f"import {package}"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
