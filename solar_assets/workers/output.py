"""A worker's stdout and stderr, kept away from the parent's: a workload that prints must not
corrupt ``solar analyze --json`` (stdout carries only the JSON).

At start the worker points file descriptors 1 and 2 at a capture file (so C-level writes,
numba's and XLA's included, are caught too) and keeps a duplicate of the original stderr for
its own log lines. Around each file ``begin`` / ``end`` return what that file wrote; the
parent logs it (``-v`` shows it), and reads the file's tail itself when a worker dies.
"""
from __future__ import annotations

import io
import os
import sys
from pathlib import Path

OUTPUT_LOG_MAX_CHARS = 4000


class OutputCapture:
    """fds 1 and 2 of this process redirected to ``path``; ``log_stream`` is the old stderr."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        self.log_stream = io.TextIOWrapper(os.fdopen(os.dup(2), "wb", buffering=0), write_through=True,
                                           encoding="utf-8", errors="replace")
        os.dup2(self._fd, 1)
        os.dup2(self._fd, 2)
        self._start = 0

    def begin(self) -> None:
        self._flush()
        self._start = os.lseek(self._fd, 0, os.SEEK_END)

    def end(self) -> str:
        """What was written since ``begin`` (the last ``OUTPUT_LOG_MAX_CHARS`` of it)."""
        self._flush()
        end = os.lseek(self._fd, 0, os.SEEK_END)
        return read_tail(self.path, self._start, end)

    @staticmethod
    def _flush() -> None:
        for stream in (sys.__stdout__, sys.__stderr__, sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass


def read_tail(path: str | Path, start: int = 0, end: int | None = None) -> str:
    """Bytes ``start:end`` of the file as text, cut to its last ``OUTPUT_LOG_MAX_CHARS``."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            end = size if end is None else min(end, size)
            begin = max(start, end - 4 * OUTPUT_LOG_MAX_CHARS)
            f.seek(begin)
            text = f.read(max(0, end - begin)).decode("utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) > OUTPUT_LOG_MAX_CHARS or begin > start:
        text = "…" + text[-OUTPUT_LOG_MAX_CHARS:]
    return text
