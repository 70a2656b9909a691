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
    framework: str  # "torch" (JAX arrives with its frontend)

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]


def read_workload_source(path: str | Path) -> WorkloadSource:
    """Hash the file and detect its framework from what it imports."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise SolarError(f"{p}: cannot read workload file: {e.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    framework = "torch" if "torch" in text else "unknown"
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
