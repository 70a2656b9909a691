"""Large framework values from a worker to its checker through shared memory, not the pipe.

Node-wise validation sends the checker every value an op group reads or writes, whole (the
checker evaluates the IR at points of them and compares). Pickled through the socket, a value is
copied four times (pickle, socket write, socket read, unpickle): for KernelBench's BigBird at
sequence length 4095 (attention scores of 12×4096² in float64) that was 110 s of the worker's
280 s. Here a value of at least ``SHARED_MIN_BYTES`` is written once to an anonymous memory file
(``memfd_create``) whose descriptor goes to the checker over the same socket (``SCM_RIGHTS``);
the checker maps it copy-on-write: one copy in all. The file has no name, so no other process —
another worker's workload among them — can find it and change a value in flight, as it could a
file in ``/dev/shm``.

Where ``memfd_create`` is missing or fails, the value goes by pickle as before.
"""
from __future__ import annotations

import logging
import os
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle, send_handle
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

SHARED_MIN_BYTES = 1 << 20
VALUE, VALUE_FD = "value", "value_fd"


class Shipments:
    """The memory files one worker made for its checker, closed once the request ends."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def send(self, conn: Connection, value: Any) -> None:
        """``(VALUE, value)`` over ``conn``; a large array as ``(VALUE_FD, (dtype, shape))`` and
        its memory file's descriptor after it (``received`` takes both)."""
        fd = self._written(value)
        if fd is None:
            conn.send((VALUE, value))
            return
        conn.send((VALUE_FD, (value.dtype.str, tuple(value.shape))))
        send_handle(conn, fd, 0)  # the destination pid is Windows' only (SCM_RIGHTS on a Unix socket)

    def _written(self, value: Any) -> int | None:
        if not isinstance(value, np.ndarray) or value.nbytes < SHARED_MIN_BYTES or value.dtype.hasobject \
                or not hasattr(os, "memfd_create"):
            return None
        try:
            fd = os.memfd_create("solar-value", os.MFD_CLOEXEC)
        except OSError as e:
            log.debug("no memory file (%s): sent through the pipe", e)
            return None
        self.fds.append(fd)
        try:
            with open(fd, "wb", closefd=False) as f:
                np.ascontiguousarray(value).tofile(f)
        except OSError as e:  # out of memory for it: through the pipe instead
            log.debug("memory file not written (%s): sent through the pipe", e)
            return None
        return fd

    def clear(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()


def received(kind: str, payload: Any, conn: Connection) -> Any:
    """The value of a ``(VALUE | VALUE_FD, payload)`` message read from ``conn``: a memory file's
    descriptor is read after it and mapped copy-on-write (writable here, never written back)."""
    if kind != VALUE_FD:
        return payload
    dtype, shape = payload
    fd = recv_handle(conn)
    try:
        with open(fd, "rb", closefd=False) as f:
            return np.memmap(f, dtype=np.dtype(dtype), mode="c", shape=tuple(shape)).view(np.ndarray)
    finally:
        os.close(fd)
