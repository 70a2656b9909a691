"""Where solar keeps things: ``SOLAR_HOME`` (caches, reports, Dagster storage) and the repository.

At the bottom of the package (no stage imports), so the report writers, the Dagster resource
and the stage chain name one home."""
from __future__ import annotations

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


def reports_dir(home: Path | None = None) -> Path:
    """``<home or SOLAR_HOME>/reports``: the report files and pictures."""
    return (home or solar_home()) / "reports"
