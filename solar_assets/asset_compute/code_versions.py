"""Each asset's code version: the stage's declared ``CODE_VERSION``, else the hash of its sources.

Read from the sources, not by importing the packages: importing them all (torch among them) made
loading the definitions cost ~10 s of every ``solar analyze`` call. Taken once per process and
package list (a process keeps running the code it imported; parsing the sources again for each
partition was 0.6 s of 20 workloads).
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

from solar_assets.cache_store import package_fingerprint

_ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def code_version(*packages: str) -> str:
    """One part per package: ``v<CODE_VERSION>`` where it declares one (bumped by its authors when
    an algorithm changes), else the hash of its sources."""
    parts = []
    for package in packages:
        declared = declared_code_version(package)
        parts.append(f"v{declared}" if declared is not None else package_fingerprint(package))
    return "+".join(parts)


def declared_code_version(module: str, depth: int = 0) -> str | None:
    """``CODE_VERSION`` of ``module`` as its source assigns it (a literal), following
    ``from X import CODE_VERSION`` re-exports; None when it declares none."""
    base = _ROOT / Path(*module.split("."))
    source = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if depth > 8 or not source.is_file():
        return None
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CODE_VERSION"
                                                for t in node.targets) and isinstance(node.value, ast.Constant):
            return str(node.value.value)
        if isinstance(node, ast.ImportFrom) and any(a.name == "CODE_VERSION" and a.asname is None for a in node.names):
            package = module if base.is_dir() else module.rsplit(".", 1)[0]
            for _ in range(max(node.level - 1, 0)):
                package = package.rsplit(".", 1)[0]
            target = f"{package}.{node.module}" if node.level else node.module
            return declared_code_version(target or package, depth + 1)
    return None
