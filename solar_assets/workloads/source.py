"""A workload's identity: its path and content hash (the data version everything derives from)."""
from __future__ import annotations

import ast
import hashlib
import os
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from solar_assets.errors import SolarError
from solar_assets.workloads.imports import References, local_modules_sha256, references
from solar_assets.workloads.training import TrainSpec, train_name

UNRECORDED = "unrecorded"
"""``WorkloadSource.reads_key`` of a source no load has recorded the reads of yet."""


@dataclass(frozen=True)
class WorkloadSource:
    name: str  # the file's stem, printable (``workload_name``): rows, tables and cache file names
    path: str
    sha256: str
    framework: str  # "torch", "jax" or "unknown" (see detect_framework)
    local_sha256: str = ""  # the local modules it imports (``workloads.imports``); "" for none
    reads_sha256: str = ""  # what it read when it last loaded: variables, outside files (``workloads.reads``)
    reads_pending: str = ""  # the cache dir whose manifest decides ``reads_key`` at use: none existed at read
    train: TrainSpec | None = None
    """The training step analysed instead of one forward pass (``workloads.training``), or None: a
    different computation of the same file, so part of ``version`` and every key made from it."""

    @property
    def reads_key(self) -> str:
        """What it reads, as its keys fold it in: ``reads_sha256``; for a source read before any
        manifest of it existed, the manifest as it is now (written by its first load), and
        ``UNRECORDED`` until then. So what a first run stores after the load is keyed by the
        reads the load found, and a source whose manifest is gone (wiped, evicted) never meets
        entries made from values its key does not show: it misses until a load records them again."""
        if not self.reads_pending:
            return self.reads_sha256
        from solar_assets.workloads.reads import load_manifest, reads_digest

        found = load_manifest(Path(self.reads_pending), self.name, self.files_version)
        return UNRECORDED if found is None else reads_digest(found)

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]

    @property
    def files_version(self) -> str:
        """The file's bytes and, where it imports local modules, theirs, as 16 hex digits (the key of
        its reads manifest, ``workloads.reads``)."""
        if not self.local_sha256:
            return self.sha256[:16]
        return hashlib.sha256(f"{self.sha256}:{self.local_sha256}".encode()).hexdigest()[:16]

    @property
    def version(self) -> str:
        """What its results depend on, as 16 hex digits: the file's bytes, the local modules it
        imports (a helper's edit makes its results stale) and, once a load recorded them, the
        environment variables and outside files it reads (``workloads.reads``)."""
        reads = self.reads_key
        if not reads and self.train is None:
            return self.files_version
        train = f":train:{self.train.to_text()}" if self.train is not None else ""
        return hashlib.sha256(f"{self.files_version}:reads:{reads}{train}".encode()).hexdigest()[:16]

    @property
    def dependencies_sha256(self) -> str:
        """Its local modules' and reads' hashes together, and the training step where one is asked
        for (what a cache key adds to the file's own)."""
        reads = self.reads_key
        deps = f"{self.local_sha256}:{reads}" if reads else self.local_sha256
        return deps if self.train is None else f"{deps}:train:{self.train.to_text()}"


def workload_name(path: str | Path) -> str:
    """The file's stem with control characters escaped (``a\\nb`` for a newline), so that a name
    always prints on one line; every other character is kept."""
    stem = Path(path).stem
    return "".join(repr(c)[1:-1] if unicodedata.category(c).startswith("C") else c for c in stem)


def is_regular_file(path: str | Path) -> bool:
    """A regular file (after symlinks), checked without opening it: a FIFO named ``x.py``
    would block the first read forever."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


FRAMEWORKS = ("torch", "jax")


def detect_framework(text: str, refs: References | None = None) -> str:
    """``"jax"`` for a file that imports jax or flax (and not torch), ``"torch"`` for one that imports
    torch (and not jax/flax), else by what it defines: ``forward(...)`` at module level is the JAX
    convention, ``class Model(nn.Module)`` with torch the PyTorch one; ``"unknown"`` when unclear.
    ``refs``: the text's ``workloads.imports.references``, where the caller has them."""
    if refs is None:
        try:
            refs = references(ast.parse(text), Path("<text>"))
        except SyntaxError:
            return "torch" if "torch" in text else "unknown"
    imported, defined = refs.imported, refs.defined
    has_torch, has_jax = "torch" in imported, bool(imported & {"jax", "flax"})
    if has_jax and not has_torch:
        return "jax"
    if has_torch and not has_jax:
        return "torch"
    if has_torch and has_jax:  # both imported: the convention decides (a JAX file has forward or a Flax Model)
        return "jax" if "forward" in defined and "Model" not in defined else "torch"
    return "torch" if "torch" in text else "unknown"


def _references(data: bytes, path: Path) -> References | None:
    """One parse and one walk of the file for both its framework and its local imports; None for a
    file that is not plain ASCII (its bytes and its decoded text could parse differently: each
    reader parses what it reads) or does not parse."""
    if not data.isascii():
        return None
    try:
        return references(ast.parse(data), path.resolve())
    except (SyntaxError, ValueError):
        return None


def read_workload_source(path: str | Path, framework: str | None = None,
                         cache_dir: str | Path | None = None, train: TrainSpec | None = None) -> WorkloadSource:
    """Hash the file and detect its framework from what it imports and defines (``framework``
    names it instead: "torch" or "jax", e.g. from ``solar analyze --framework``). With
    ``cache_dir``, what its loads read (``workloads.reads``) is part of its version; before any
    load recorded it, the manifest is looked up at each use (``WorkloadSource.reads_key``).
    ``train``: the source of the file's training step (``workloads.training``), named ``stem[train]``."""
    from dataclasses import replace

    from solar_assets.workloads.reads import load_manifest, reads_digest

    p = Path(path)
    if p.exists() and not is_regular_file(p):
        raise SolarError(f"{p}: not a regular file (a FIFO, device or directory); a workload is a .py file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise SolarError(f"{p}: cannot read workload file: {e.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    if framework is not None and framework not in FRAMEWORKS:
        raise SolarError(f"{p}: unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")
    refs = _references(data, p)
    framework = framework or detect_framework(text, refs)
    src = WorkloadSource(name=train_name(workload_name(p), train), path=str(p),
                         sha256=hashlib.sha256(data).hexdigest(), framework=framework,
                         local_sha256=local_modules_sha256(p, refs), train=train)
    if not cache_dir:
        return src
    manifest = load_manifest(Path(cache_dir), src.name, src.files_version)
    if manifest is None:
        return replace(src, reads_pending=str(cache_dir))
    reads = reads_digest(manifest)
    return replace(src, reads_sha256=reads) if reads else src


def discover_workloads(*paths: str | Path) -> list[Path]:
    """Expand files and directories into workload files (``*.py`` not starting with ``_``), sorted.
    In a directory only regular files count (a FIFO or socket named ``x.py`` is skipped, never
    opened); a file named explicitly is kept, and reading it says what is wrong."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(f for f in path.glob("*.py") if not f.name.startswith("_") and is_regular_file(f))
        else:
            found.append(path)
    return found
