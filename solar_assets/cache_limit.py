"""The home's size limit: least recently used cache entries go first when a call leaves the home
over ``SOLAR_CACHE_LIMIT``.

Everything under ``cache/`` (the stage caches, the reads manifests, the kernel modules) and
``call_records/`` is an optimisation: a missing entry is a miss, recomputed, and ``cache_store``
marks each entry's use by touching it on a hit. The rest of the home is what the latest
materialisations and runs point to — the stored asset values (small: golden values over their
cap are a digest and a recipe, ``golden.recipe``), the Dagster instance, the reports — and is
never evicted; where it alone is over the limit, one warning says so and what holds it. The limit
is enforced when a ``solar analyze`` or ``solar coverage`` call ends (a single cold run may pass it
while it runs), down to ``REFILL`` of it so that the next call does not evict again at once.
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from solar_assets.errors import SolarError

log = logging.getLogger(__name__)

LIMIT_ENV = "SOLAR_CACHE_LIMIT"
DEFAULT_LIMIT = 3 << 30
REFILL = 0.9
EVICTABLE = ("cache", "call_records")  # directories of the home whose files are caches
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_limit(text: str) -> int | None:
    """Bytes from ``12345``, ``64K``, ``500M``, ``3G``, ``1.5T`` (binary units, an optional
    ``iB``/``B``); None for ``0`` or ``none`` (no limit). Raises ``SolarError`` naming the value."""
    value = text.strip()
    if value.lower() in ("0", "none", "off", "unlimited"):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", value, re.IGNORECASE)
    if match is None or float(match.group(1)) <= 0:
        raise SolarError(f"{LIMIT_ENV}={text!r}: not a size; give bytes or a number with K, M, G or T "
                         "(3G, 500M), or 0 for no limit")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def cache_limit() -> int | None:
    """The limit in bytes (``SOLAR_CACHE_LIMIT``, default 3 GiB); None: no limit."""
    raw = os.environ.get(LIMIT_ENV)
    return DEFAULT_LIMIT if raw is None or not raw.strip() else parse_limit(raw)


@dataclass
class Eviction:
    """What one enforcement did."""

    home_bytes: int  # before
    evicted_files: int = 0
    evicted_bytes: int = 0
    kept_bytes: int = 0  # what is not a cache: stored values, the Dagster instance, reports

    @property
    def after_bytes(self) -> int:
        return self.home_bytes - self.evicted_bytes


def _scan(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every file under ``root`` with its ``lstat``; links to folders are not followed, as
    ``os.walk`` lists them. ``os.scandir``'s entries, no path objects: every call of a warm run
    walks the whole home (50,000 files after KernelBench)."""
    todo = [str(root)]
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir():
                            if not entry.is_symlink():
                                todo.append(entry.path)
                        else:
                            yield entry.path, entry.stat(follow_symlinks=False)
                    except OSError:
                        continue  # removed meanwhile (another call's temp file)
        except OSError:
            continue


def _walk(root: Path) -> list[tuple[Path, os.stat_result]]:
    return [(Path(path), st) for path, st in _scan(root)]


def _entries(home: Path) -> list[tuple[float, int, list[Path]]]:
    """The cache entries as ``(last use, bytes, files)``: a payload with its digest sidecar."""
    from solar_assets.cache_store import DIGEST_SUFFIX

    groups: dict[Path, list[tuple[Path, os.stat_result]]] = {}
    for kind in EVICTABLE:
        for path, st in _walk(home / kind):
            if path.name.startswith("."):  # a writer's temporary file: not ours to judge
                continue
            payload = path.with_name(path.name[: -len(DIGEST_SUFFIX)]) if path.name.endswith(DIGEST_SUFFIX) else path
            groups.setdefault(payload, []).append((path, st))
    return sorted((max(st.st_mtime for _, st in files), sum(st.st_size for _, st in files), [p for p, _ in files])
                  for files in groups.values())


def _size(root: Path) -> int:
    return sum(st.st_size for _, st in _scan(root))


def enforce_limit(home: Path, limit: int | None) -> Eviction | None:
    """Evict the least recently used cache entries while the home is over ``limit`` (down to
    ``REFILL`` of it); None when there is no limit or the home is within it."""
    from solar_assets.formatting import format_bytes

    if limit is None or not home.is_dir():
        return None
    total = _size(home)
    if total <= limit:
        return None
    eviction = Eviction(home_bytes=total)
    target = int(limit * REFILL)
    for _, size, files in _entries(home):
        if eviction.after_bytes <= target:
            break
        for path in files:
            try:
                path.unlink()
            except OSError:
                continue
        eviction.evicted_files += 1
        eviction.evicted_bytes += size
    if eviction.evicted_files:
        log.info("%s was over its limit of %s (%s): %d cache entries (%s) evicted, least recently used first; "
                 "they are computed again when needed", home, format_bytes(limit), LIMIT_ENV,
                 eviction.evicted_files, format_bytes(eviction.evicted_bytes))
    if eviction.after_bytes > limit:
        held = {p.name: _size(p) for p in home.iterdir() if p.is_dir() and p.name not in EVICTABLE}
        top = ", ".join(f"{name}/ {format_bytes(size)}" for name, size in sorted(held.items(), key=lambda kv: -kv[1])
                        if size)
        eviction.kept_bytes = sum(held.values())
        log.warning("%s holds %s, over its limit of %s (%s), with no cache entry left to evict: %s; raise the "
                    "limit, or remove what you no longer need", home, format_bytes(eviction.after_bytes),
                    format_bytes(limit), LIMIT_ENV, top)
    return eviction
