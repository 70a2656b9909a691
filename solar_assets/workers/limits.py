"""A worker's memory limit: parsed from the command line, measured from the parent.

The limit is enforced by the parent process reading the resident set size (RSS) of the worker
and its children from ``/proc`` a few times a second, and killing the worker past it. Address-
space limits do not work here: ``RLIMIT_AS`` counts virtual reservations, and JAX/XLA, numba's
LLVM and glibc's malloc arenas reserve gigabytes they never touch, so a limit low enough to
matter makes them fail at import. ``RLIMIT_DATA`` counts writable private mappings, touched or
not (a ``np.empty`` of 40 GB that is never written). RSS is what the OOM killer acts on; a
burst faster than the poll can still meet the kernel's OOM killer first, and that is reported
as a worker killed by SIGKILL.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from solar_assets.errors import SolarError

DEFAULT_MEMORY_FRACTION = 0.75
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def total_memory_bytes() -> int:
    """Physical memory, or the cgroup's limit where that is lower (a container's share)."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < total:
            total = int(text)
    return total


def parse_memory_limit(text: str | None) -> int | None:
    """``--memory-limit``: ``75%`` (of this machine's memory), ``8G`` / ``8GiB`` / ``512M`` /
    bytes, or ``0`` for none; None when no limit. Raises ``SolarError`` naming the bad value."""
    if text is None:
        text = f"{DEFAULT_MEMORY_FRACTION:.0%}"
    text = str(text).strip()
    if text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError:
            percent = -1.0
        if not 0 < percent <= 100:
            raise SolarError(f"--memory-limit {text!r}: a percentage must be in (0, 100]")
        return int(total_memory_bytes() * percent / 100)
    match = _SIZE.match(text)
    if not match:
        raise SolarError(f"--memory-limit {text!r}: give a size such as 8G, 512M, 75% or 0 (no limit)")
    number, unit = float(match.group(1)), (match.group(2) or "").lower().rstrip("b").rstrip("i")
    value = int(number * _UNITS[unit])
    return value or None


def process_tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants, from ``/proc`` (0 once it is gone)."""
    from solar_assets.workers.containment import descendants

    total, page = 0, os.sysconf("SC_PAGE_SIZE")
    for p in (pid, *descendants(pid)):
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue  # it exited meanwhile
    return total


def format_gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"
