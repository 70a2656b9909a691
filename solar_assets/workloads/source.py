"""A workload's identity: its path and content hash (the data version everything derives from)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from solar_assets.errors import SolarError


@dataclass(frozen=True)
class WorkloadSource:
    name: str
    path: str
    sha256: str
    framework: str  # "torch", "jax" or "unknown" (see detect_framework)

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]


FRAMEWORKS = ("torch", "jax")


def detect_framework(text: str) -> str:
    """``"jax"`` for a file that imports jax or flax (and not torch), ``"torch"`` for one that imports
    torch (and not jax/flax), else by what it defines: ``forward(...)`` at module level is the JAX
    convention, ``class Model(nn.Module)`` with torch the PyTorch one; ``"unknown"`` when unclear."""
    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return "torch" if "torch" in text else "unknown"
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    has_torch, has_jax = "torch" in imported, bool(imported & {"jax", "flax"})
    if has_jax and not has_torch:
        return "jax"
    if has_torch and not has_jax:
        return "torch"
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    if has_torch and has_jax:  # both imported: the convention decides (a JAX file has forward or a Flax Model)
        return "jax" if "forward" in defined and "Model" not in defined else "torch"
    return "torch" if "torch" in text else "unknown"


def read_workload_source(path: str | Path, framework: str | None = None) -> WorkloadSource:
    """Hash the file and detect its framework from what it imports and defines (``framework``
    names it instead: "torch" or "jax", e.g. from ``solar analyze --framework``)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise SolarError(f"{p}: cannot read workload file: {e.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    if framework is not None and framework not in FRAMEWORKS:
        raise SolarError(f"{p}: unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")
    framework = framework or detect_framework(text)
    return WorkloadSource(name=p.stem, path=str(p), sha256=hashlib.sha256(data).hexdigest(), framework=framework)


def discover_workloads(*paths: str | Path) -> list[Path]:
    """Expand files and directories into workload files (``*.py`` not starting with ``_``), sorted."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(f for f in path.glob("*.py") if not f.name.startswith("_"))
        else:
            found.append(path)
    return found
