"""Every on-disk cache entry of solar, written and read one way: atomically, with its digest beside it.

A cache entry is a file (``<kind>/<workload>-<key>.json`` or ``.npz``) and a sidecar
``<file>.sha256`` holding the sha256 of the file's bytes. ``store`` writes the sidecar first and
then the payload, each to a temporary file in the same directory renamed over the target
(``os.replace``), so a reader sees either no entry, or a whole payload with its digest; a crash
between the two renames leaves a digest without a payload (a plain miss). ``load`` verifies the
digest before decoding: an entry that is truncated, edited, left without its digest or that no
longer decodes is deleted, a warning names the file, and the caller recomputes it. Entries are
content-addressed by their key, so two writers of one key write the same bytes.

Used by the IR, validation-size, golden, verdict, agent, cache-aware and ski-slope caches;
the generated kernel modules (``solar_assets.execute.cache``) are named by their content's hash
and checked against it instead.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

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


def load(path: Path | None, decode: Callable[[bytes], T]) -> T | None:
    """The entry at ``path`` decoded by ``decode``, or None: no entry (a miss), or one that fails
    its digest or does not decode (deleted, with a warning naming the file)."""
    return load_file(path, lambda p: decode(p.read_bytes()))


def load_file(path: Path | None, decode: Callable[[Path], T]) -> T | None:
    """``load`` for a decoder that reads the verified file itself (``np.load``)."""
    if path is None or not path.is_file():
        return None
    try:
        problem = _digest_problem(path)
    except OSError as e:
        return _discard(path, f"cannot be read ({e.strerror or e})")
    if problem:
        return _discard(path, problem)
    try:
        value = decode(path)
    except DECODE_ERRORS as e:
        return _discard(path, f"does not decode ({type(e).__name__}: {_first_line(e)})")
    logger.debug("cache hit %s", path)
    return value


def load_json(path: Path | None, decode: Callable[[Any], T] = lambda value: value) -> T | None:
    """``load`` of a JSON entry, ``decode`` applied to the parsed value."""
    return load(path, lambda data: decode(json.loads(data.decode("utf-8"))))


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


def _discard(path: Path, problem: str) -> None:
    logger.warning("cache entry %s %s; discarded, recomputing", path, problem)
    for p in (path, digest_path(path)):
        with contextlib.suppress(OSError):  # already gone, or not ours to remove
            p.unlink()
    return None


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else ""
