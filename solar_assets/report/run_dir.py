"""Reports that last: one directory per ``solar analyze`` run, and a pointer to the newest.

    $SOLAR_HOME/reports/20261201T093012Z/   report.{json,csv,md}, failures.csv, per_op.csv, *.png, skislope/
    $SOLAR_HOME/reports/latest              -> 20261201T093012Z (a symlink; a text file naming it where
                                               the file system has no symlinks)

A run never writes into an earlier run's directory, so a failed run cannot replace a good report:
it gets a directory of its own with its failures listed, and ``latest`` moves to it.
``--output DIR`` writes the run's report into DIR instead (``latest`` is not moved).
"""
from __future__ import annotations

import logging
import os
from datetime import datetime, timezone
from pathlib import Path

logger = logging.getLogger(__name__)

LATEST = "latest"


def new_run_dir(root: str | Path, now: datetime | None = None) -> Path:
    """A fresh ``<root>/<UTC timestamp>`` (``-2``, ``-3`` … when two runs start in one second)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 10_000):
        run = root / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            run.mkdir()
            return run
        except FileExistsError:
            continue
    raise RuntimeError(f"{root}: no free run directory for {stamp}")  # pragma: no cover


def point_latest(root: str | Path, run: str | Path) -> Path:
    """Make ``<root>/latest`` name ``run`` (replaced atomically: a reader never sees it missing)."""
    root, run = Path(root), Path(run)
    link = root / LATEST
    tmp = root / f".{LATEST}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    try:
        os.symlink(run.name, tmp, target_is_directory=True)
    except OSError:  # no symlinks here (some Windows and network file systems): a pointer file
        tmp.write_text(run.name + "\n", encoding="utf-8")
    if link.is_dir() and not link.is_symlink():
        raise FileExistsError(f"{link} is a directory, not solar's pointer to the newest report; move it away")
    os.replace(tmp, link)
    return link


def latest_run(root: str | Path) -> Path | None:
    """The newest run's directory (through ``latest``), or None when there is none."""
    link = Path(root) / LATEST
    if link.is_symlink():
        target = link.resolve()
    elif link.is_file():
        target = Path(root) / link.read_text(encoding="utf-8").strip()
    else:
        return None
    return target if target.is_dir() else None
