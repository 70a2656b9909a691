"""What a workload reads besides its own files: environment variables and files outside the
installation, so that everything computed from it is keyed by them too.

A file that sizes its model from ``os.environ["DIM"]`` or from a JSON file beside a dataset gives
other results when those change, though its bytes do not. While a workload loads (its module runs,
``Model(...)`` and ``get_inputs()`` are called: ``workloads.loader``) and while the trace and the
golden run call its ``forward`` (``chain.stages``), ``recording`` notes every
environment variable it looks up (``os.environ`` is swapped for a mapping that records its keys)
and every file it opens outside the Python installation, solar, ``/proc``, ``/sys`` and ``/dev``
(an audit hook). The stages that load it save those names as the source's manifest
(``$SOLAR_HOME/cache/reads/<name>-<source hash>.json``, ``save_manifest``); reading the source
again folds the current value of each variable and the sha256 of each file into its
``local_sha256`` (``reads_digest``), so its version, the stage caches, the call records and
Dagster's data versions all follow them. Every load writes the manifest, an empty one for a file
that reads nothing; a source read before its manifest exists looks it up at each use
(``WorkloadSource.reads_key``): keys made before the load are ``unrecorded`` (they miss), the
entries its first run stores after the load are keyed by what the load recorded, and a manifest
wiped later makes the source miss again instead of meeting entries made from values it no longer shows.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST_DIR = "reads"
_IGNORED_ROOTS = tuple(os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, "/proc", "/sys",
                                                      "/dev", "/etc", "/usr"})
_SOLAR_ROOT = os.path.realpath(Path(__file__).resolve().parents[2])


@dataclass
class Reads:
    """The environment variables and outside files one load looked at."""

    env: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)

    def as_json(self) -> dict[str, list[str]]:
        return {"env": sorted(self.env), "files": sorted(self.files)}


_ENV_GETTERS = tuple(os.path.realpath(p) for p in (os.__file__, __import__("_collections_abc").__file__))
_LIBRARY_ROOTS = tuple(os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})


def _caller_is_own(own: tuple[str, ...], skip: tuple[str, ...], depth: int = 2) -> bool:
    """Whether the code asking is the workload's own (its file or a local module): the nearest
    frame outside ``skip`` (the getters of ``os.environ``; the standard library and installed
    packages, for a file opened on the workload's behalf, ``np.load``). A library reading its own
    settings while the workload imports or calls it is not the workload's input."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<frozen"):
            frame = frame.f_back
            continue
        path = os.path.realpath(name)
        if not any(path == r or path.startswith(r + os.sep) for r in skip):
            return path in own
        frame = frame.f_back
    return False


class _RecordingEnviron(MutableMapping):
    """``os.environ`` that notes the keys the workload's own code looks up (``get``, ``[]``, ``in``)."""

    def __init__(self, real: MutableMapping, seen: set[str], own: tuple[str, ...]):
        self._real, self._seen, self._own = real, seen, own

    def _note(self, key: object) -> None:
        if _caller_is_own(self._own, _ENV_GETTERS, 3):
            self._seen.add(str(key))

    def __getitem__(self, key: str) -> str:
        self._note(key)
        return self._real[key]

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return key in self._real

    def get(self, key: str, default: object = None):  # noqa: ANN201 - Mapping's signature
        self._note(key)
        return self._real.get(key, default)

    def __setitem__(self, key: str, value: str) -> None:
        self._real[key] = value

    def __delitem__(self, key: str) -> None:
        del self._real[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._real)

    def __len__(self) -> int:
        return len(self._real)

    def copy(self) -> dict[str, str]:
        return dict(self._real)

    def __getattr__(self, name: str):  # noqa: ANN204 - os._Environ's extras (encodekey, ...)
        return getattr(self._real, name)


_ACTIVE: list[tuple[Reads, tuple[str, ...]]] = []
_HOOKED = threading.Lock()
_INSTALLED = [False]


def _hook(event: str, args: tuple) -> None:
    if event != "open" or not _ACTIVE or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    reads, own = _ACTIVE[-1]
    mode = args[1] if len(args) > 1 else "r"
    if isinstance(mode, str) and any(c in mode for c in "wax"):
        return
    try:
        path = os.path.realpath(os.fsdecode(args[0]))
    except (TypeError, ValueError):
        return
    if path in own or path.startswith(_SOLAR_ROOT + os.sep) or \
            any(path == r or path.startswith(r + os.sep) for r in _IGNORED_ROOTS):
        return
    if path.endswith((".pyc", ".so")) or "__pycache__" in path:
        return
    if _caller_is_own(own, _LIBRARY_ROOTS, 2):  # the workload's code opened it, or had a library open it
        reads.files.add(path)


@contextlib.contextmanager
def recording(own_files: tuple[str, ...] = ()) -> Iterator[Reads]:
    """Note what the code run inside reads (``Reads``); ``own_files`` (the workload and its local
    modules, keyed already) are not noted."""
    with _HOOKED:
        if not _INSTALLED[0]:
            sys.addaudithook(_hook)
            _INSTALLED[0] = True
    reads = Reads()
    real = os.environ
    own = tuple(os.path.realpath(f) for f in own_files)
    os.environ = _RecordingEnviron(real, reads.env, own)  # type: ignore[assignment]
    _ACTIVE.append((reads, own))
    try:
        yield reads
    finally:
        _ACTIVE.pop()
        os.environ = real  # type: ignore[assignment]
        reads.env -= _SOLAR_VARIABLES


@contextlib.contextmanager
def recorded_reads(src: object) -> Iterator[None]:
    """``recording`` for a workload source (its file and local modules are its own), remembered
    under its path for ``save_manifest``."""
    from solar_assets.workloads.imports import local_modules

    path = str(getattr(src, "path"))
    with recording((path, *map(str, local_modules(path)))) as reads:
        yield
    remember(path, reads)


_SOLAR_VARIABLES = {"SOLAR_HOME", "DAGSTER_HOME"}
"""Variables solar itself sets for the run (the others a workload reads are its own)."""

RECORDED: dict[str, Reads] = {}
"""What the loads of this process recorded, by workload path (``save_manifest`` writes them)."""


def remember(path: str, reads: Reads) -> None:
    found = RECORDED.setdefault(path, Reads())
    found.env |= reads.env
    found.files |= reads.files


def manifest_path(cache_dir: Path, name: str, source_key: str) -> Path:
    from solar_assets.paths import file_stem

    return Path(cache_dir) / MANIFEST_DIR / f"{file_stem(name, 80)}-{source_key[:16]}.json"


def load_manifest(cache_dir: Path | None, name: str, source_key: str) -> Reads | None:
    """The source's manifest, or None: none written yet, or one that fails its digest (a warning
    names it; the source then misses until a load records it again)."""
    if cache_dir is None:
        return None
    from solar_assets import cache_store

    return cache_store.load_json(manifest_path(cache_dir, name, source_key),
                                 lambda data: Reads(set(map(str, data["env"])), set(map(str, data["files"]))))


def save_manifest(cache_dir: Path | None, name: str, path: str, source_key: str) -> bool:
    """Write what this process recorded for ``path`` (merged with the manifest there, or an empty
    manifest: it reads nothing); True when it names something new (the source's key changes)."""
    reads = RECORDED.get(path)
    if cache_dir is None or reads is None:
        return False
    found = load_manifest(cache_dir, name, source_key)
    old = found or Reads()
    merged = Reads(old.env | reads.env, old.files | reads.files)
    if found is not None and merged == old:
        return False  # nothing new
    from solar_assets import cache_store

    # written also when it reads nothing: "recorded, none" is what lets its keys be reused
    return cache_store.store_json(manifest_path(cache_dir, name, source_key), merged.as_json()) and merged != old


def reads_digest(reads: Reads | None) -> str:
    """The current value of each variable and the sha256 of each file the manifest names ('' when none)."""
    if reads is None or not (reads.env or reads.files):
        return ""
    h = hashlib.sha256()
    for name in sorted(reads.env):
        value = os.environ.get(name)
        h.update(f"env:{name}={'<unset>' if value is None else value}\0".encode())
    for path in sorted(reads.files):
        try:
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            digest = "<unreadable>"
        h.update(f"file:{path}={digest}\0".encode())
    return h.hexdigest()[:16]
