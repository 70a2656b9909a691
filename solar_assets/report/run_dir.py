"""Reports that last: one directory per ``solar analyze`` run, and a pointer to the newest.

    $SOLAR_HOME/reports/20261201T093012Z/   report.{json,csv,md}, failures.csv, per_op.csv, *.png, skislope/
    $SOLAR_HOME/reports/latest              -> 20261201T093012Z (a symlink; a text file naming it where
                                               the file system has no symlinks)

A run never writes into an earlier run's directory, so a failed run cannot replace a good report:
it gets a directory of its own with its failures listed, and ``latest`` moves to it. A run whose
report would be the newest one's again, file for file (nothing it shows changed: ``report_key``),
makes no directory: it names the newest one, which stays ``latest``.
``--output DIR`` writes the run's report into DIR instead (``latest`` is not moved).
"""
from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
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


REPORT_KEY = ".report_key"
"""A run directory's digest of everything its files show (``report_key``)."""


def report_key(parts: Sequence[str]) -> str:
    """sha256 over ``parts``: what the run's report files are made from (rows, failures, per-op
    rows, the options that shape the files, solar's code)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def unchanged_run(root: str | Path, key: str) -> Path | None:
    """The newest run's directory when its report was made from exactly what ``key`` digests: a
    call that would write the same files again points at it instead (145 MB of files and ~8 s for
    KernelBench on six parts, each warm call)."""
    previous = latest_run(root)
    if previous is None:
        return None
    try:
        return previous if (previous / REPORT_KEY).read_text(encoding="utf-8").strip() == key else None
    except OSError:
        return None


def mark_run(run: str | Path, key: str) -> None:
    """Record the digest of what ``run``'s report files were made from (``unchanged_run``)."""
    (Path(run) / REPORT_KEY).write_text(key + "\n", encoding="utf-8")
