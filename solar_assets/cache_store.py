"""Every on-disk cache entry of solar, written and read one way: atomically, with its digest beside it.

A cache entry is a file (``<kind>/<workload>-<key>.json`` or ``.npz``) and a sidecar
``<file>.sha256`` holding the sha256 of the file's bytes. ``store`` writes the sidecar first and
then the payload, each to a temporary file in the same directory renamed over the target
(``os.replace``), so a reader sees either no entry, or a whole payload with its digest; a crash
between the two renames leaves a digest without a payload (a plain miss). ``load`` verifies the
digest before decoding: an entry that is truncated, edited, left without its digest or that no
longer decodes is deleted, a warning names the file, and the caller recomputes it. Entries are
content-addressed by their key, so two writers of one key write the same bytes.

Where an entry lives is decided here too (``source_entry`` for what depends on a workload
file, ``digest_entry`` for what depends on an einsum graph), keyed by ``package_fingerprint``
of the producing code: used by the IR, validation-size, golden, verdict, node-wise, agent,
cache-aware and ski-slope caches. The generated kernel modules (``solar_assets.execute.cache``)
are importable ``.py`` files named by their content's hash and checked against it instead.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
DIGEST_SUFFIX = ".sha256"
# What a payload that passed its digest check may still raise while decoding (written by an
# older solar whose format differs): such an entry is a miss, like a corrupt one.
DECODE_ERRORS = (ValueError, KeyError, TypeError, IndexError, EOFError, OSError, zipfile.BadZipFile)


def _file_mode() -> int:
    """0666 less the umask: what ``open()`` would have made (``mkstemp`` makes 0600, which would
    keep other accounts sharing a ``SOLAR_HOME`` from reading the cache)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


FILE_MODE = _file_mode()


def digest_path(path: Path) -> Path:
    """Where the digest of the entry at ``path`` lives: ``<path>.sha256``."""
    return path.with_name(path.name + DIGEST_SUFFIX)


_JOURNAL: list[list[Path]] = []
"""Open write journals (``journal``): every file a cache or a stored value put on disk meanwhile."""


@contextlib.contextmanager
def journal() -> Iterator[list[Path]]:
    """Collect the paths of the cache entries (and digests, stored values) written inside: a
    worker deletes them when the file that made them turns out untrusted (``workers.tamper``)."""
    written: list[Path] = []
    _JOURNAL.append(written)
    try:
        yield written
    finally:
        _JOURNAL.remove(written)


def note_written(path: Path) -> None:
    for written in _JOURNAL:
        written.append(Path(path))


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` at once: a temporary file in the same directory, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # already gone, or not ours to remove
            os.unlink(tmp)
        raise


def store(path: Path | None, payload: bytes | str) -> bool:
    """Write a cache entry and its digest at ``path`` (``None``: caching is off). A cache that
    cannot be written (read-only, full) only costs the recomputation next time: a warning says
    so and False comes back."""
    data = payload.encode() if isinstance(payload, str) else payload
    return store_file(path, lambda tmp: tmp.write_bytes(data))


def store_file(path: Path | None, write: Callable[[Path], Any]) -> bool:
    """``store`` for a payload that ``write(tmp)`` puts in a file (large arrays: no copy in memory)."""
    if path is None:
        return False
    tmp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.fchmod(fd, FILE_MODE)
        os.close(fd)
        tmp = Path(name)
        write(tmp)
        write_atomic(digest_path(path), (file_sha256(tmp) + "\n").encode())
        os.replace(tmp, path)
        note_written(path)
        note_written(digest_path(path))
    except OSError as e:
        logger.warning("cannot write cache entry %s (%s); it will be recomputed next time", path,
                       e.strerror or e)
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):  # already renamed over ``path``
                tmp.unlink()
    return True


def store_json(path: Path | None, value: Any) -> bool:
    """``store`` of ``value`` as JSON text."""
    return store(path, json.dumps(value))


def load(path: Path | None, decode: Callable[[bytes], T], discard_level: int = logging.WARNING) -> T | None:
    """The entry at ``path`` decoded by ``decode``, or None: no entry (a miss), or one that fails
    its digest or does not decode (deleted, logged at ``discard_level`` naming the file)."""
    return load_file(path, lambda p: decode(p.read_bytes()), discard_level)


def load_file(path: Path | None, decode: Callable[[Path], T], discard_level: int = logging.WARNING) -> T | None:
    """``load`` for a decoder that reads the verified file itself (``np.load``)."""
    if path is None or not path.is_file():
        return None
    try:
        problem = _digest_problem(path)
    except OSError as e:
        return _discard(path, f"cannot be read ({e.strerror or e})", discard_level)
    if problem:
        return _discard(path, problem, discard_level)
    try:
        value = decode(path)
    except DECODE_ERRORS as e:
        return _discard(path, f"does not decode ({type(e).__name__}: {_first_line(e)})", discard_level)
    logger.debug("cache hit %s", path)
    with contextlib.suppress(OSError):  # its last use, for the home's size limit (cache_limit)
        os.utime(path)
    return value


def load_json(path: Path | None, decode: Callable[[Any], T] = lambda value: value,
              discard_level: int = logging.WARNING) -> T | None:
    """``load`` of a JSON entry, ``decode`` applied to the parsed value."""
    return load(path, lambda data: decode(json.loads(data.decode("utf-8"))), discard_level)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _digest_problem(path: Path) -> str:
    sidecar = digest_path(path)
    try:
        expected = sidecar.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return f"has no digest beside it ({sidecar.name} is missing)"
    except (OSError, UnicodeDecodeError) as e:
        return f"has an unreadable digest {sidecar.name} ({type(e).__name__})"
    actual = file_sha256(path)
    if expected != actual:
        return (f"does not match its digest ({path.stat().st_size} bytes with sha256 {actual[:12]}…, "
                f"{sidecar.name} says {expected[:12]}…): truncated or modified")
    return ""


def _discard(path: Path, problem: str, level: int = logging.WARNING) -> None:
    logger.log(level, "cache entry %s %s; discarded, recomputing", path, problem)
    for p in (path, digest_path(path)):
        with contextlib.suppress(OSError):  # already gone, or not ours to remove
            p.unlink()
    return None


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else ""


# ---------------------------------------------------------------------------- where an entry lives
CALL_RECORDS = "call_records"  # kind (directory under $SOLAR_HOME) of ``call_record_entry``
CODE_PACKAGES = ("solar_assets", "ir_schemas")  # the code a finished result depends on
# the frameworks and numeric libraries whose installed versions a finished result depends on
LIBRARIES = ("torch", "numpy", "numba", "transformers", "einops", "jax", "jaxlib", "flax")
SETTINGS_PREFIX = "SOLAR_"
# where results live, how workers run, what is measured of the run and how big the home may grow:
# not what the results are (SOLAR_STAGE_CLOCK set for a profile made every call record a miss)
NOT_SETTINGS = ("SOLAR_HOME", "SOLAR_FRESH_WORKERS", "SOLAR_STAGE_CLOCK", "SOLAR_CACHE_LIMIT", "SOLAR_K8S_EXECUTOR")

class KeyedSource(Protocol):
    """What a cache key reads of a workload (``solar_assets.workloads.WorkloadSource``)."""

    name: str
    sha256: str
    framework: str


class KeyedGraph(Protocol):
    """What a cache key reads of an einsum graph (``solar_assets.graph.EinsumGraph``)."""

    def digest(self) -> str: ...


@functools.lru_cache(maxsize=None)
def package_fingerprint(package: str) -> str:
    """Hash of a package's ``.py`` sources, without importing it: a code version that changes
    exactly when the stage's code does (used for Dagster ``code_version`` and cache keys).

    Taken once per process: a process keeps running the code it imported, so a source edited
    while it runs must not give its results the new code's key."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):  # a parent that does not import, or a module without a spec
        spec = None
    if spec is None or not spec.submodule_search_locations:
        origin = spec.origin if spec else None
        files = [Path(origin)] if origin else []
    else:
        files = sorted(f for d in spec.submodule_search_locations for f in Path(d).rglob("*.py"))
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()[:12]


def source_entry(cache_dir: Path | None, kind: str, src: KeyedSource, packages: tuple[str, ...],
                 suffix: str, variant: Mapping[str, object] | None = None) -> Path | None:
    """A cache file keyed by everything the result depends on: the source's hash, the local
    modules it imports (``src.local_sha256``: a helper beside it, or on a path it adds), its
    framework, the producing packages' sources, the framework's version and ``variant`` (the
    rebound constants, translator options, or the budget). The process-wide state a file could
    change (torch's default dtype, the working directory) is not in the key: ``solar analyze``
    runs each file in a worker that restores it (``solar_assets.workers.state``)."""
    if cache_dir is None:
        return None
    code = ":".join(package_fingerprint(p) for p in packages)
    extra = json.dumps(dict(variant or {}), sort_keys=True)
    versions = _jax_versions() if src.framework == "jax" else _torch_version()
    local = getattr(src, "dependencies_sha256", getattr(src, "local_sha256", ""))  # helpers and reads
    key = hashlib.sha256(f"{src.sha256}:{local}:{src.framework}:{code}:{versions}:{extra}".encode()).hexdigest()
    return Path(cache_dir) / kind / f"{file_safe(src.name)}-{key[:16]}{suffix}"


def call_record_entry(home: Path, partition_key: str) -> Path:
    """Where ``solar analyze``'s call record of a workload partition lives
    (``dagster_defs.call_records``): ``$SOLAR_HOME/call_records/<key>-<hash of key>.json``. One
    entry per partition, replaced by each call that records it; the freshness key is inside
    (a record of other inputs is a miss). Not under ``$SOLAR_HOME/dagster``: wiping Dagster's
    history leaves the records, and their verification against the instance then fails."""
    digest = hashlib.sha256(partition_key.encode()).hexdigest()[:16]
    return Path(home) / CALL_RECORDS / f"{file_safe(partition_key)}-{digest}.json"


def digest_entry(cache_dir: Path | None, kind: str, name: str, graph: KeyedGraph, packages: tuple[str, ...],
                 variant: str) -> Path | None:
    """A cache file keyed by an einsum graph's digest, the producing packages' sources and
    ``variant`` (a capacity, "sweep"): hardware sharing a buffer size share the entry."""
    if cache_dir is None:
        return None
    code = ":".join(package_fingerprint(p) for p in packages)
    key = hashlib.sha256(f"{graph.digest()}:{code}:{variant}".encode()).hexdigest()
    return Path(cache_dir) / kind / f"{file_safe(name)}-{key[:16]}.json"


def file_safe(name: str) -> str:
    """A workload name as a file-name part (``paths.file_stem``)."""
    from solar_assets.paths import file_stem

    return file_stem(name, 80)


def _torch_version() -> str:
    import torch

    return torch.__version__


def package_versions(names: tuple[str, ...]) -> str:
    """``name=version`` of each installed distribution, ``-`` where missing (package metadata:
    nothing is imported)."""
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    return ",".join(f"{name}={version(name)}" for name in names)


def _jax_versions() -> str:
    """jax, jaxlib and flax versions, in the form cache keys have always used."""
    return "jax" + ",".join(v.split("=", 1)[1] for v in package_versions(("jax", "jaxlib", "flax")).split(","))


@functools.lru_cache(maxsize=None)
def _library_versions() -> str:
    return package_versions(LIBRARIES)


def environment_key() -> str:
    """What a finished result (a coverage row, a call record) depends on beyond its own inputs,
    taken without importing torch, numba or Dagster: every source of ``solar_assets`` and
    ``ir_schemas`` (``package_fingerprint``), the installed versions of ``LIBRARIES`` (package
    metadata) and every ``SOLAR_*`` setting but ``SOLAR_HOME`` (sizes, budgets, translator,
    hardware dir, fp32 policy)."""
    code = ":".join(package_fingerprint(p) for p in CODE_PACKAGES)
    settings = json.dumps({k: v for k, v in sorted(os.environ.items())
                           if k.startswith(SETTINGS_PREFIX) and k not in NOT_SETTINGS})
    return f"{code}|{_library_versions()}|{settings}"
