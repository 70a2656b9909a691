"""The verdict out of the workload's reach: the IR runs on the golden inputs, and is compared with
the golden outputs, in a process that never imports a workload.

A worker (``pool``) imports and runs workload files; whatever a file leaves in that process — a
patched validator it restored before the snapshot looked (``tamper``), a monkeypatched NumPy
routine the comparison calls — could decide its verdict. So each worker starts a checker before
its first file: a child process that imports solar's executor and comparison only, and answers
``validate_program`` requests over a pipe (the program and the golden arrays go by pickle). The
checker is the worker's descendant, so it dies with it (a time or memory limit kills the worker's
tree); a checker that crashes (a kernel's segfault) fails that validation with its signal, and the
next request starts a new one. Node-wise validation, which compares against the framework's own
values op by op, still runs beside the workload.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from typing import Any

log = logging.getLogger(__name__)


class CheckerDied(RuntimeError):
    """The checker process ended while it ran a validation (a crash in the IR's kernels)."""


class Checker:
    """One checker process and the pipe to it."""

    def __init__(self) -> None:
        # a plain child process (a worker is a daemonic multiprocessing process: it may not have
        # multiprocessing children), talking multiprocessing's pickled messages over a socket pair
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from solar_assets.workers.checker import main; main({theirs.fileno()})"],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, close_fds=True)
        theirs.close()
        self.conn = Connection(ours.detach())

    def alive(self) -> bool:
        return self.process.poll() is None

    def validate(self, program: Any, golden: Any, *, source: str, traced: bool) -> Any:
        """``validate_program(program, golden, source=..., traced=...)`` in the checker."""
        try:
            self.conn.send((program, golden, source, traced))
            kind, payload = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            try:
                code = self.process.wait(5)
            except subprocess.TimeoutExpired:
                code = None
            why = signal.Signals(-code).name if code is not None and code < 0 else f"status {code}"
            raise CheckerDied(f"the checker process running the IR ended ({why})") from None
        if kind == "error":
            raise payload
        return payload

    def stop(self) -> None:
        try:
            self.conn.send(None)
            self.process.wait(5)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.process.kill()


_ACTIVE: list[Checker] = []


def start_checker() -> None:
    """Give this process (a worker) its checker, before it imports any workload."""
    if not _ACTIVE:
        _ACTIVE.append(Checker())


def checker_pids() -> set[int]:
    """This process's checker (kept when a file's leftover processes are stopped)."""
    return {c.process.pid for c in _ACTIVE}


def checked_validation(program: Any, golden: Any, *, source: str, traced: bool) -> Any | None:
    """The verdict from this process's checker; None when it has none (the caller validates in
    process: ``--jobs 0``, a notebook, a Dagster step of the UI)."""
    if not _ACTIVE:
        return None
    checker = _ACTIVE[0]
    if not checker.alive():  # it died on an earlier file: a new one for this one
        _ACTIVE[0] = checker = Checker()
    try:
        return checker.validate(program, golden, source=source, traced=traced)
    except CheckerDied:
        _ACTIVE[0] = Checker()
        raise


def main(fd: int) -> None:
    """The checker process: it ends with its worker (``PR_SET_PDEATHSIG``), and serves ``fd``."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: the worker's death is ours
        except (OSError, AttributeError):
            pass
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    _serve(Connection(fd))


def _serve(conn: Any) -> None:
    """The checker: validate each request; never imports a workload."""
    from solar_assets.validate.compare import validate_program

    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        program, golden, source, traced = request
        try:
            result = validate_program(program, golden, source=source, traced=traced)
        except Exception as e:  # the caller raises it, as an in-process validation would
            import pickle

            try:
                pickle.loads(pickle.dumps(e))
            except Exception:  # noqa: BLE001 - an exception that does not survive the pipe: its text does
                e = RuntimeError(f"{type(e).__name__}: {e}")
            conn.send(("error", e))
            continue
        conn.send(("ok", result))
