"""What a workload's code may leave behind in its worker: processes, connections, files written
elsewhere.

A worker is a child subreaper (``PR_SET_CHILD_SUBREAPER``, Linux): a process the workload starts,
even one that leaves its session (``Popen(..., start_new_session=True)``) and its parent, is
re-parented to the worker instead of init, so it is still the worker's descendant when the file is
done; every descendant left then is killed and named (``stop_descendants``). The runner does the
same before it kills a worker for a limit. An audit hook (``sys.addaudithook``) records, while a
file runs, the sockets it connects or binds and the files it opens for writing outside its own
directory, the home and the temp dir (``Activity``): the runner logs them at ``-v``.
"""
from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (False where the OS has no such call)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from ``/proc``), children before their children."""
    out, todo, seen = [], [pid], {pid}
    while todo:
        p = todo.pop(0)
        try:
            tasks = list(Path(f"/proc/{p}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            for c in children:
                if c not in seen:
                    seen.add(c)
                    out.append(c)
                    todo.append(c)
    return out


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"pid {pid}"
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)[:120] or f"pid {pid}"


def stop_descendants(pid: int, keep: set[int] | frozenset[int] = frozenset()) -> list[str]:
    """Kill (SIGKILL) every descendant of ``pid`` but ``keep``; what was killed, as command lines."""
    killed = []
    for child in descendants(pid):
        if child in keep:
            continue
        what = _command(child)
        try:
            os.kill(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        killed.append(what)
    for child in list(descendants(pid)):  # reap the ones that were ours (zombies otherwise)
        try:
            os.waitpid(child, os.WNOHANG)
        except (ChildProcessError, OSError):
            pass
    return killed


@dataclass
class Activity:
    """What one file's code did outside its lane, while ``watching`` is set."""

    connections: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        if self.connections:
            out.append("used the network: " + ", ".join(sorted(set(self.connections))[:8]))
        if self.writes:
            out.append("wrote outside its directory, the home and the temp dir: "
                       + ", ".join(sorted(set(self.writes))[:8]))
        return out


class Watch:
    """The worker's audit hook (installed once: a hook cannot be removed) and the file it watches."""

    def __init__(self) -> None:
        self.activity: Activity | None = None
        self.allowed: tuple[str, ...] = ()
        self._local = threading.local()
        sys.addaudithook(self._hook)

    def begin(self, workload: str, home: str | None) -> None:
        roots = [os.path.dirname(os.path.abspath(workload)), tempfile.gettempdir(), "/dev", "/proc", "/sys"]
        if home:
            roots.append(home)
        self.allowed = tuple(os.path.realpath(r) for r in roots)
        self.activity = Activity()

    def end(self) -> Activity:
        activity, self.activity = self.activity or Activity(), None
        return activity

    def _hook(self, event: str, args: tuple) -> None:
        activity = self.activity
        if activity is None or getattr(self._local, "busy", False):
            return
        self._local.busy = True  # the hook's own calls raise audit events too
        try:
            if event in ("socket.connect", "socket.bind") and len(args) >= 2 and \
                    not isinstance(args[1], (str, bytes)):  # an IP address (a Unix socket is a path)
                activity.connections.append(f"{event.split('.')[1]} {args[1]!r}")
            elif event == "open" and len(args) >= 2 and isinstance(args[0], (str, bytes, os.PathLike)):
                mode, flags = args[1], args[2] if len(args) > 2 else 0
                writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                    (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND))
                if writing:
                    path = os.path.realpath(os.fsdecode(args[0]))
                    if _own_cache_probe(path):
                        return
                    if not any(path == root or path.startswith(root + os.sep) for root in self.allowed):
                        activity.writes.append(path)
        except Exception:  # noqa: BLE001 - a hook must never break the workload it watches
            pass
        finally:
            self._local.busy = False


_SOLAR_PACKAGES = (os.path.realpath(Path(__file__).resolve().parents[1]) + os.sep,)
"""solar's own package directory (``solar_assets``)."""


def _own_cache_probe(path: str) -> bool:
    """numba checking that the cache directory of one of solar's own compiled functions
    (``bounds.cache_aware.kernels``, ``cache=True``) is writable, the first time a worker calls
    it: an unnamed temporary file (``O_TMPFILE``) opened in that ``__pycache__``, which creates
    nothing (its audit events name the directory itself, which no open can write as a file).
    Without this, the file that happened to be first in a fresh worker was noted as writing into
    solar's package. A named file written there is still noted."""
    return os.path.basename(path) == "__pycache__" and path.startswith(_SOLAR_PACKAGES) and os.path.isdir(path)
