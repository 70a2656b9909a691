"""The files behind workload partitions analysed from outside the workload dir, kept in the home.

``solar analyze other/gemm.py`` registers the partition ``other.gemm``; the call knows its file,
but the UI, the ``source_files`` sensor and the automation run with the default settings, which
know only ``data/workloads``. Each call adds its outside files here
(``$SOLAR_HOME/workload_paths.json``, key -> absolute path, written atomically under the home
lock), and ``AssetSettings.workload_path`` looks a key up here after the call's own files: from
then on the sensor hashes that file too, so an edit to it is observed and re-analysed, and a
materialisation from the UI finds it. Not a cache: never evicted.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

REGISTRY = "workload_paths.json"


def registry_path(home: str | Path) -> Path:
    return Path(home) / REGISTRY


def known_paths(home: str | Path) -> dict[str, str]:
    """``key -> path`` of every outside file a call analysed ({} when none, or unreadable)."""
    try:
        data = json.loads(registry_path(home).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def remember_paths(home: str | Path, paths: Mapping[str, str]) -> None:
    """Add ``key -> path`` entries (the caller holds the home lock); a home that cannot take them
    only costs the sensor's watch of those files (logged)."""
    from solar_assets.cache_store import write_atomic

    known = known_paths(home)
    merged = {**known, **{k: str(Path(v).resolve()) for k, v in paths.items()}}
    if merged == known:
        return
    try:
        write_atomic(registry_path(home), json.dumps(merged, indent=1, sort_keys=True).encode())
    except OSError as e:
        log.warning("%s: the outside workload files could not be recorded (%s): the sensor will not watch them",
                    registry_path(home), e.strerror or e)


def assign_keys(paths: list[str], workload_dir: str | Path, home: str | Path) -> dict[str, str]:
    """``path -> partition key`` (``keys.workload_key``) for a call's files: a file the home knows
    keeps its key; a new one gets the shortest directory suffix no other file holds, counting the
    home's registry and the call's own files before it."""
    from solar_assets.asset_compute.keys import workload_key

    taken = known_paths(home)
    out: dict[str, str] = {}
    for p in paths:
        key = workload_key(p, workload_dir, taken)
        out[str(p)] = key
        if key not in taken:
            taken[key] = str(Path(p).resolve())
    return out
