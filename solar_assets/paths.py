"""Where solar keeps things: ``SOLAR_HOME`` (caches, reports, Dagster storage) and the repository.

At the bottom of the package (no stage imports), so the report writers, the Dagster resource
and the stage chain name one home."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def solar_home(override: str | Path | None = None) -> Path:
    """``override``, else ``$SOLAR_HOME``, else ``<repo>/data/solar_home``."""
    if override is not None:
        return Path(override).expanduser().resolve()
    env = os.environ.get("SOLAR_HOME")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / "data" / "solar_home"


def default_cache_dir() -> Path:
    """``<SOLAR_HOME>/cache``: every on-disk cache entry (``solar_assets.cache_store``)."""
    return solar_home() / "cache"


FILE_STEM_BYTES = 96


def file_stem(name: str, limit: int = FILE_STEM_BYTES) -> str:
    """``name`` (a workload's name) as the stem of a file solar writes: path separators replaced,
    and a name over ``limit`` UTF-8 bytes cut and given 8 hex digits of its hash. A 240-character
    file name is legal on ext4; its picture's name with a suffix and a temporary prefix is not."""
    safe = name.replace("/", "_").replace("\\", "_").replace("\0", "_")
    raw = safe.encode("utf-8", "surrogateescape")
    if len(raw) <= limit:
        return safe
    head = raw[:limit - 9].decode("utf-8", "ignore")
    return f"{head}~{hashlib.sha256(raw).hexdigest()[:8]}"


def reports_dir(home: Path | None = None) -> Path:
    """``<home or SOLAR_HOME>/reports``: the report files and pictures."""
    return (home or solar_home()) / "reports"


HOME_PARTS = ("cache", "storage", "reports", "dagster", "graphs", "call_records")
"""The directories solar writes under a home (each must be a writable directory where it exists)."""
_PROBE_BYTES = 1 << 16


def home_problem(home: Path) -> str | None:
    """Why ``home`` cannot hold solar's files, as the end of a sentence naming the path (None:
    it can): a file where a directory must be, a directory that cannot be created or written
    (read-only storage, permissions), a disk with no room for a small file."""
    for part in (home, *(home / name for name in HOME_PARTS)):
        if part.exists() and not part.is_dir():
            return f"{part} is a file, not a directory"
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"{home} cannot be created ({e.strerror or e})"
    for part in (home, *(home / name for name in HOME_PARTS if (home / name).is_dir())):
        probe = part / f".solar-write-probe-{os.getpid()}"
        try:
            with probe.open("wb") as f:
                f.write(b"\0" * _PROBE_BYTES)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            return f"{part} is not writable ({e.strerror or e})"
        finally:
            try:
                probe.unlink()
            except OSError:
                pass
    return None
