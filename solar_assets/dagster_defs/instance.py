"""solar's embedded Dagster instance and how a run's failure reads: what the runner, the one-call
materialisation (``call``) and the re-analysis sweep (``automation``) all need, in one module that
imports none of them.

The instance lives in ``$SOLAR_HOME/dagster`` (SQLite). A database that cannot be read (corrupt,
truncated, a table missing) raises ``DagsterStorageError``, one line naming the file and the remedy.
Dagster itself is imported where used, so importing this module costs nothing.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solar_assets import pipeline
from solar_assets.errors import SolarError

if TYPE_CHECKING:
    import dagster as dg

    from solar_assets.dagster_defs.resources import SolarConfig

log = logging.getLogger(__name__)

DAGSTER_YAML = """\
# solar's embedded Dagster instance: SQLite storage in this directory (written by solar).
telemetry:
  enabled: false
# no "join the community" pop-up over the UI of a local tool
nux:
  enabled: false
# Keep Dagster's per-file debug lines ("Loading partition ...", "Writing file at ...") out of
# the event log: each stored event costs a SQLite write, and they double a run's events.
python_logs:
  python_log_level: INFO
# One run at a time: two runs of torch / numba / GLPK on a small machine only slow each other
# down, and the queue keeps the order runs were requested in (upstream first).
concurrency:
  runs:
    max_concurrent_runs: 1
# Dagster's SQLite storage, as its instance reference documents it: runs, events and schedules
# under this directory (the event log one SQLite file per run, plus the index of asset events).
storage:
  sqlite:
    base_dir: {home}
"""
DAGSTER_YAML_MARK = "# solar's embedded Dagster instance"
# Dagster's console logger would repeat every failure with a stack trace: the CLI reports them itself.
QUIET_LOGGERS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
STORAGE_STAGE = "dagster storage"  # failed_stage of a result whose Dagster database failed
SQLITE_HEADER = b"SQLite format 3\x00"


class DagsterStorageError(SolarError):
    """The embedded Dagster instance's SQLite storage cannot be used; the message names the file."""


class ReportRunFailed(SolarError):
    """The call's report run failed (its step's one-line error): the CLI makes the rows again
    without Dagster, from the stage caches, so they still land."""


def _storage_remedy(home: Path) -> str:
    return (f"remove it (or all of {home / 'dagster'}: Dagster's run history, not solar's caches), "
            "or run with --no-dagster")


def broken_databases(home: Path) -> list[tuple[Path, str]]:
    """``(file, why)`` for each SQLite file under ``$SOLAR_HOME/dagster`` that is not a readable
    database: wrong header, truncated, failing SQLite's quick check."""
    broken = []
    for db in sorted((home / "dagster").rglob("*.db")):
        try:
            with db.open("rb") as f:
                header = f.read(len(SQLITE_HEADER))
            if header and header != SQLITE_HEADER:
                broken.append((db, "file is not a database"))
                continue
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
                verdict = conn.execute("PRAGMA quick_check").fetchone()
            if verdict and verdict[0] != "ok":
                broken.append((db, f"SQLite quick check: {verdict[0]}"))
        except (OSError, sqlite3.Error) as e:
            broken.append((db, f"{type(e).__name__}: {e}"))
    return broken


def _is_storage_failure(error: BaseException) -> bool:
    """An exception whose chain holds a SQLite / SQLAlchemy database error (``file is not a
    database``, ``NoSuchTableError: runs``) or Dagster's schema errors."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        module = type(error).__module__ or ""
        if isinstance(error, sqlite3.Error) or module.startswith("sqlalchemy") or \
                type(error).__name__ in ("DagsterInstanceSchemaOutdated", "DagsterInstanceMigrationRequired"):
            return True
        error = error.__cause__ or error.__context__
    return False


def _disk_full(error: BaseException, text: str, home: Path) -> bool:
    """A write that failed for want of space (ENOSPC somewhere in the chain, or SQLite's words)."""
    import errno

    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        error = error.__cause__ or error.__context__
    return "database or disk is full" in text or ("disk I/O error" in text and _no_space_left(home))


def _no_space_left(home: Path) -> bool:
    """Whether the home's file system has less than a megabyte free (SQLite says "disk I/O error"
    when a journal write fails for want of space)."""
    import shutil

    try:
        return shutil.disk_usage(home).free < (1 << 20)
    except OSError:
        return False


@contextlib.contextmanager
def storage_guard(home: Path) -> Iterator[None]:
    """Turn a failure of the Dagster database into one ``DagsterStorageError`` line naming the
    file (the first broken one found, else the directory) and what to do."""
    try:
        yield
    except DagsterStorageError:
        raise
    except Exception as e:
        if not _is_storage_failure(e):
            raise
        text = pipeline.one_line(f"{type(e).__name__}: {e}")
        if _disk_full(e, text, home):  # the database is fine: the disk is not
            raise DagsterStorageError(f"{home / 'dagster'}: the Dagster database cannot be written (the disk is "
                                      f"full: {text[:160]}); free some space, or set SOLAR_HOME to a disk with "
                                      "room, or run with --no-dagster") from None
        broken = broken_databases(home)
        where, why = broken[0] if broken else (home / "dagster", text[:200])
        raise DagsterStorageError(f"{where}: the Dagster database cannot be used ({why}); "
                                  f"{_storage_remedy(home)}") from None


def check_storage(home: Path) -> None:
    """Raise ``DagsterStorageError`` for the first broken database file, before any run."""
    broken = broken_databases(home)
    if broken:
        where, why = broken[0]
        raise DagsterStorageError(f"{where}: the Dagster database cannot be used ({why}); {_storage_remedy(home)}")


def dagster_home(home: Path) -> Path:
    """``$SOLAR_HOME/dagster`` with a ``dagster.yaml`` (telemetry off), created if missing."""
    path = home / "dagster"
    path.mkdir(parents=True, exist_ok=True)
    config = path / "dagster.yaml"
    text = DAGSTER_YAML.format(home=json.dumps(str(path.resolve())))
    if not config.exists() or (config.read_text().startswith(DAGSTER_YAML_MARK) and config.read_text() != text):
        config.write_text(text)  # solar's own file is kept current; a user's is left alone
    return path


def prepare_ui_instance(home: Path) -> None:
    """Before ``solar ui``: ``dagster.yaml`` in place, the shipped workload and hardware files
    registered as partitions and observed (the ``source_files`` sensor keeps that up to date)."""
    from solar_assets.dagster_defs.partitions import register_partitions
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.sensors import new_partitions
    from solar_assets.dagster_defs.sources import observe_sources

    config = SolarConfig.default(home)
    with solar_instance(home) as instance:
        workloads, hardware = new_partitions(instance, config)
        register_partitions(instance, workloads, hardware)
        observe_sources(instance, config)


_HELD: dict[str, int] = {}  # the homes whose lock this process holds, and how deep
LOCK_WAIT_S = 600.0
"""How long a call waits for another solar process's hold on the instance (a report run is seconds)."""


@contextlib.contextmanager
def home_lock(home: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold ``$SOLAR_HOME/dagster/.solar.lock`` (``flock``, released when the process dies): the
    instance's creation and migration, the partitions' registration and the report run are one
    process's at a time, so two ``solar analyze`` started together never race Dagster's schema or
    its dynamic-partition table. The workers' computing is not serialised."""
    import fcntl
    import time

    path = home / "dagster"
    held = str(path.resolve())
    if _HELD.get(held):  # this process holds it already (flock on a second descriptor would wait on itself)
        _HELD[held] += 1
        try:
            yield
        finally:
            _HELD[held] -= 1
        return
    path.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    with (path / ".solar.lock").open("a") as f:
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise DagsterStorageError(f"{path}: another solar process has held the Dagster instance for "
                                              f"{wait_s:g} s; wait for it, or run with --no-dagster") from None
                time.sleep(0.05)
        _HELD[held] = 1
        try:
            yield
        finally:
            _HELD.pop(held, None)
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def solar_instance(home: Path) -> dg.DagsterInstance:
    """The instance, created (and its schema migrated) under ``home_lock``."""
    import dagster as dg

    with home_lock(home):
        instance = dg.DagsterInstance.from_config(str(dagster_home(home)))
        instance.get_runs_count()  # the run storage's tables exist once this returns
    return instance


RUN_TAGS = {"solar/cli": "analyze"}


def process_tags() -> dict[str, str]:
    """The tags of a run this process starts: who runs it (``fail_abandoned_runs`` reads them)."""
    import socket

    return {**RUN_TAGS, "solar/pid": str(os.getpid()), "solar/host": socket.gethostname()}


def fail_abandoned_runs(instance: dg.DagsterInstance) -> int:
    """Mark as failed the runs a solar process of this host started and did not finish (killed:
    ``kill -9``, a time or memory limit, a crash), so the UI does not show them running forever;
    the number marked. A run of a process that is alive, or of another host, is left alone."""
    import socket

    import dagster as dg

    host, marked = socket.gethostname(), 0
    records = instance.get_run_records(dg.RunsFilter(
        statuses=[dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.NOT_STARTED],
        tags=RUN_TAGS))
    for record in records:
        tags = record.dagster_run.tags
        pid = tags.get("solar/worker") or tags.get("solar/pid")
        if not pid or tags.get("solar/host", host) != host or _alive(int(pid)):
            continue
        instance.report_run_failed(record.dagster_run, f"its solar process (pid {pid}) ended before the run did "
                                                       "(killed, or a time or memory limit)")
        marked += 1
    return marked


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def raise_if_interrupted(result: dg.ExecuteInProcessResult) -> None:
    """A run that failed because the process was told to stop (Ctrl-C, ``kill``, ``timeout``:
    Dagster turns the signal into ``DagsterExecutionInterruptedError`` in the step) ends the call
    as an interrupt: not as a failed run that the CLI would answer by running the stages again
    without Dagster."""
    for event in result.get_step_failure_events():
        error = event.step_failure_data.error
        while error is not None:
            if error.cls_name == "DagsterExecutionInterruptedError":
                raise KeyboardInterrupt(f"{event.step_key} was interrupted")
            error = error.cause


def failure_message(result: dg.ExecuteInProcessResult, path: str | Path) -> str:
    """One line naming the file: the Failure's description, or the user exception's message."""
    for event in result.get_step_failure_events():
        data = event.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            return pipeline.with_path(data.user_failure_data.description, path)
        error = data.error
        while error is not None and error.cause is not None:
            error = error.cause
        text = error.message if error is not None else "unknown error"
        return pipeline.with_path(f"{event.step_key} failed unexpectedly: {text}", path)
    return pipeline.with_path("the Dagster run failed without a step failure", path)


def resources_for(config: SolarConfig) -> dict[str, object]:
    """The resources every materialisation needs (the CLI builds them per workload directory)."""
    import dagster as dg

    from solar_assets.dagster_defs.report_inputs import STORED_PARTITIONS, StoredPartitions

    storage = f"{config.home}/storage"
    return {"solar": config, "io_manager": dg.FilesystemIOManager(base_dir=storage),
            STORED_PARTITIONS: StoredPartitions(base_dir=storage)}
