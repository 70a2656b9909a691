"""The verdict out of the workload's reach: the IR runs on the golden inputs, and is compared with
the golden outputs, in a process that never imports a workload.

A worker (``pool``) imports and runs workload files; whatever a file leaves in that process — a
patched validator it restored before the snapshot looked (``tamper``), a monkeypatched NumPy
routine the comparison calls — could decide its verdict. So each worker starts a checker before
its first file: a child process that imports solar's executor and comparison only, and answers
``validate_program`` requests over a pipe (the program by pickle, the golden arrays as memory
files: ``shared_values``). The checker is the worker's descendant, so it dies with it (a time or
memory limit kills the worker's tree); a checker that crashes (a kernel's segfault) fails that
validation with its signal, and the next request starts a new one. Node-wise validation runs there
too (``NodewiseSession``): the worker's full-size framework pass answers the checker's requests for
the values each op group reads, and the IR's evaluation, the comparison and the verdict are the checker's.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any

from solar_assets.stage_clock import WAITING, clocked, subject, timed
from solar_assets.workers.shared_values import SHARED, received, send

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
            send(self.conn, ("program", program, golden, source, traced))  # arrays as memory files
            with timed(WAITING + "the checker"):
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


def _live_checker() -> Checker | None:
    """This process's checker, a new one where it died on an earlier file; None when it has none."""
    if not _ACTIVE:
        return None
    if not _ACTIVE[0].alive():
        _ACTIVE[0] = Checker()
    return _ACTIVE[0]


def checked_validation(program: Any, golden: Any, *, source: str, traced: bool) -> Any | None:
    """The verdict from this process's checker; None when it has none (the caller validates in
    process: ``--jobs 0``, a notebook, a Dagster step of the UI)."""
    checker = _live_checker()
    if checker is None:
        return None
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
    with timed("checker start (imports)"):
        from solar_assets.validate.compare import validate_program
        from solar_assets.workers.heap import freeze_start_up

        freeze_start_up()  # its imports' objects: no request's collections walk them

    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        if request[0] == SHARED:  # a validation: the program and its golden arrays (``shared_values``)
            request = received(*request, conn)
        if request[0] == "nodewise":
            with subject(request[1][4]):
                _serve_nodewise(conn, request[1])
            continue
        _, program, golden, source, traced = request
        try:
            with subject(source):
                result = validate_program(program, golden, source=source, traced=traced)
        except Exception as e:  # the caller raises it, as an in-process validation would
            conn.send(("error", _picklable(e)))
            continue
        conn.send(("ok", result))


def _picklable(e: BaseException) -> BaseException:
    """``e``, or its text where it does not survive the pipe."""
    import pickle

    try:
        pickle.loads(pickle.dumps(e))
    except Exception:  # noqa: BLE001 - whatever pickling raises
        return RuntimeError(f"{type(e).__name__}: {e}")
    return e


# ---------------------------------------------------------------------------- node-wise validation
class NodewiseSession:
    """Node-wise validation with the checking in the checker (``validate.nodewise_check.MakeChecker``):
    the worker runs the framework's full-size pass and answers, node by node, the checker's requests
    for the framework values it reads; the IR's point evaluation, the comparison and the verdict
    happen in the checker, which never imported the workload."""

    def __init__(self, checker: Checker, *setup: Any) -> None:
        self._checker = checker
        self._stats: tuple[int, int, float] | None = None
        self._call(("nodewise", setup))
        log.debug("%s: node-wise checks in the checker process %d", setup[4], checker.process.pid)

    def _call(self, message: tuple, live: Any = None) -> Any:
        from solar_assets.validate.nodewise_check import _numpy

        try:
            self._checker.conn.send(message)
            while True:
                with timed(WAITING + "the checker"):
                    kind, payload = self._checker.conn.recv()
                if kind in ("get", "get64"):  # a framework value the check reads, as NumPy (narrow floats
                    # widened); get64: the framework's op run again in float64 (``capture.CapturedValues.float64``)
                    try:
                        if kind == "get":
                            value = _numpy(live[payload])
                        else:
                            recomputed = live.float64(payload) if hasattr(live, "float64") else None
                            value = None if recomputed is None else _numpy(recomputed)
                    except Exception as e:  # noqa: BLE001 - the checker says which value failed / keeps its verdict
                        self._checker.conn.send(("failed", f"{type(e).__name__}: {e}"))
                    else:
                        send(self._checker.conn, value)  # a large value as a memory file
                elif kind == "error":
                    raise payload
                else:
                    return payload
        except (EOFError, OSError, BrokenPipeError):
            _ACTIVE[:] = [Checker()]
            raise CheckerDied("the checker process running node-wise validation ended") from None

    def on_node(self, name: str, live: Any) -> None:
        self._call(("node", name, frozenset(live)), live)

    def _counts(self) -> tuple[int, int, float]:
        if self._stats is None:
            self._stats = self._call(("counts",))
        return self._stats

    @property
    def exact(self) -> int:
        return self._counts()[0]

    @property
    def sampled(self) -> int:
        return self._counts()[1]

    @property
    def evaluations(self) -> float:
        return self._counts()[2]

    def result(self, note: str, start: float) -> Any:
        import time

        return self._call(("finish", note, time.perf_counter() - start))


def nodewise_checker() -> Any | None:
    """A ``MakeChecker`` for this process's checker; None when it has none (checked in process)."""
    checker = _live_checker()
    return None if checker is None else (lambda *setup: NodewiseSession(checker, *setup))


RECEIVED_KEPT_BYTES = 1 << 30
"""The framework values a node-wise pass keeps in the checker after the node that asked for them,
for the later op groups that read them too (least recently used first out). Each was sent again
for every group reading it: BigBird at sequence length 4095 sent 65.5 GB for 27.4 GB of distinct
values, a quarter of its worker's time in copying them."""


class _ReceivedValues:
    """The values a pass received, while the worker still holds them live, within ``limit`` bytes;
    read-only, as a later group reads the very array."""

    def __init__(self, limit: int = RECEIVED_KEPT_BYTES) -> None:
        self.limit = limit
        self._values: OrderedDict[str, Any] = OrderedDict()
        self._bytes = 0

    def get(self, name: str) -> Any | None:
        if name in self._values:
            self._values.move_to_end(name)
        return self._values.get(name)

    def keep(self, name: str, value: Any) -> None:
        nbytes = int(getattr(value, "nbytes", 0))
        if nbytes > self.limit:
            return
        if hasattr(value, "flags"):
            value.flags.writeable = False
        self._values[name] = value
        self._bytes += nbytes
        while self._bytes > self.limit:
            self._drop(next(iter(self._values)))

    def only(self, live: frozenset[str]) -> None:
        """Forget what the worker no longer holds (a name may be reused by no other value, but a
        value dead there is read by no later group)."""
        for name in [n for n in self._values if n not in live]:
            self._drop(name)

    def _drop(self, name: str) -> None:
        self._bytes -= int(getattr(self._values.pop(name), "nbytes", 0))


class _RemoteLive:
    """The worker's live framework values as the checker sees them: names known, values fetched
    (or kept from an earlier node's request: ``_ReceivedValues``)."""

    def __init__(self, conn: Any, names: frozenset[str], kept: _ReceivedValues | None = None) -> None:
        self._conn, self._names = conn, names
        self._kept = kept if kept is not None else _ReceivedValues(0)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(name)
        value = self._kept.get(name)
        if value is None:
            self._conn.send(("get", name))
            with timed(WAITING + "the worker's framework values"):
                kind, value = self._conn.recv()
            if kind != SHARED:
                raise RuntimeError(f"the worker could not give the framework's value of {name}: {value}")
            value = received(kind, value, self._conn)
            self._kept.keep(name, value)
        return value

    def float64(self, name: str) -> Any:
        """The worker's ``CapturedValues.float64(name)``, as NumPy; None where it has none."""
        self._conn.send(("get64", name))
        with timed(WAITING + "the worker's framework values"):
            kind, value = self._conn.recv()
        return received(kind, value, self._conn) if kind == SHARED else None


@clocked("node-wise checks (in the checker)")
def _serve_nodewise(conn: Any, setup: tuple) -> None:
    """One node-wise pass: ``_Checker`` here, fed by the worker's values (``NodewiseSession``)."""
    import time

    from solar_assets.validate.nodewise_check import _Checker

    checker = _Checker(*setup)
    kept = _ReceivedValues()
    conn.send(("ok", None))
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        kind = message[0]
        try:
            if kind == "node":
                kept.only(message[2])
                checker.on_node(message[1], _RemoteLive(conn, message[2], kept))
                conn.send(("ok", None))
            elif kind == "counts":
                conn.send(("ok", (checker.exact, checker.sampled, checker.evaluations)))
            elif kind == "finish":
                conn.send(("ok", checker.result(message[1], time.perf_counter() - message[2])))
                return
            else:
                conn.send(("error", RuntimeError(f"unexpected node-wise request {kind!r}")))
                return
        except Exception as e:  # the worker raises it, as an in-process check would
            conn.send(("error", _picklable(e)))
            return
