"""A real PostgreSQL server for the tests that run Dagster on Postgres (``postgres_url``).

The fixture starts Debian's PostgreSQL (``initdb`` / ``pg_ctl`` from the ``postgresql`` package;
``make test`` installs it when missing) as a non-root user on 127.0.0.1 and a free port, and stops
it afterwards. As root it runs the server as the system user ``solarpg`` (created with
``useradd`` when missing): PostgreSQL refuses to run as root.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_USER = "solarpg"


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_user(command: list[str]) -> list[str]:
    """``command`` as the non-root server user when this process is root."""
    if os.geteuid() != 0:
        return command
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
                       check=True)
    return ["runuser", "-u", PG_USER, "--", *command]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    pytest.importorskip("dagster_postgres", reason="pip install -e '.[postgres]' (make test does)")
    # SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3; dagster-postgres ships psycopg2
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.fail("PostgreSQL is not installed: apt-get install postgresql (make test does)")
    root = Path(tempfile.mkdtemp(prefix="solar-pg-"))  # not under pytest's 0700 tmp: the server user reads it
    data = root / "data"
    data.mkdir()
    if os.geteuid() == 0:
        _as_user(["true"])  # creates the user
        shutil.chown(root, PG_USER)
        shutil.chown(data, PG_USER)
    root.chmod(0o755)
    port = free_port()
    subprocess.run(_as_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                             "-E", "UTF8"]), check=True, capture_output=True)
    log = root / "server.log"
    subprocess.run(_as_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
                             "-o", f"-h 127.0.0.1 -p {port} -k {root}", "start"]), check=True, capture_output=True)
    try:
        subprocess.run(_as_user([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                                 "dagster"]), check=True, capture_output=True)
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/dagster"
    finally:
        subprocess.run(_as_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def postgres_yaml(postgres_url: str) -> str:
    """A ``dagster.yaml`` whose storage is the server at ``postgres_url``."""
    return f"telemetry:\n  enabled: false\nstorage:\n  postgres:\n    postgres_url: \"{postgres_url}\"\n"
