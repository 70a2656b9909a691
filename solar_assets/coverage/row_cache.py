"""Finished coverage rows on disk, so a repeat ``solar coverage`` decides from the cache alone.

The stage caches (IR, golden outputs, verdicts) make a repeat check of an unchanged file fast,
but reaching them costs a worker process that imports torch and numba (seconds per worker, and
each stage's key wants torch's version). A repeat run of 270 unchanged files should cost only
reading them, so the whole row is kept too, under a key computed without importing torch:

- the file's bytes and the local modules it imports (``WorkloadSource.version``) and its path
  (the row names it),
- the validation budget,
- ``cache_store.environment_key()``, shared with ``solar analyze``'s call records: every source of
  ``solar_assets`` and ``ir_schemas`` (a hash of the files, not of anything imported), the
  installed versions of the frameworks and numeric libraries (package metadata), and every
  ``SOLAR_*`` setting but ``SOLAR_HOME`` (sizes, node-wise budget, translator).

Only rows that ``check_workload`` finished are stored, failures included (a missing lowering is
as deterministic as a pass); a file that timed out or killed its worker is checked again.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from solar_assets import cache_store
from solar_assets.errors import SolarError

KIND = "coverage_row"


def row_path(cache_dir: str | Path | None, path: str | Path, budget: Any = None) -> Path | None:
    """Where the finished row of ``path`` lives under ``cache_dir`` (None: caching is off, or the
    file cannot be read; then the check itself says what is wrong)."""
    from solar_assets.chain.config import RunConfig
    from solar_assets.workloads import read_workload_source

    if cache_dir is None:
        return None
    try:
        src = read_workload_source(path, RunConfig.from_env().framework, cache_dir)  # as the chain reads it
    except (OSError, SolarError):
        return None
    key = hashlib.sha256("|".join([src.version, src.framework, str(path), repr(budget),
                                   cache_store.environment_key()]).encode()).hexdigest()
    return Path(cache_dir) / KIND / f"{cache_store.file_safe(src.name)}-{key[:16]}.json"


def load_row(cache_dir: str | Path | None, path: str | Path, budget: Any = None) -> dict[str, Any] | None:
    """The stored row of ``path`` (``CoverageRow.as_dict``), its seconds replaced by this lookup's,
    or None on a miss."""
    start = time.perf_counter()
    row = cache_store.load(row_path(cache_dir, path, budget), json.loads)
    if row is None:
        return None
    return {**row, "seconds": time.perf_counter() - start}


def save_row(cache_dir: str | Path | None, path: str | Path, row: dict[str, Any], budget: Any = None) -> None:
    """Store the finished row of ``path``."""
    cache_store.store_json(row_path(cache_dir, path, budget), row)
