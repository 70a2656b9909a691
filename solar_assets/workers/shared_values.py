"""Large arrays from a worker to its checker through shared memory, not through the pipe.

The checker gets the golden values of every validation (inputs, weights, outputs and their
float64 run: up to ~770 MiB for a KernelBench file at its validation size) and, in node-wise
validation, every framework value an op group reads or writes, whole (for KernelBench's BigBird
at sequence length 4095, attention scores of 12×4096² in float64). Pickled through the socket, an
array is copied four times (pickle, socket write, socket read, unpickle): 110 s of BigBird's 280 s
worker time, ~0.5 s of a level-1 file's validation.

``send`` pickles any object with protocol 5 and takes each contiguous array buffer of at least
``SHARED_MIN_BYTES`` out of band: it is written once to an anonymous memory file
(``memfd_create``), whose descriptor goes over the same socket (``SCM_RIGHTS``) and is closed here
straight after (the message holds its own reference); ``received`` maps each file copy-on-write
and unpickles the object around them: one copy in all. The file has no name, so no other process
(another worker's workload among them) can find it and change a value in flight, as it could a
file in ``/dev/shm``.

Where ``memfd_create`` is missing or fails, the buffer goes in the pickle as before.
"""
from __future__ import annotations

import io
import logging
import mmap
import os
import pickle
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle, send_handle
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

SHARED_MIN_BYTES = 1 << 20
SHARED = "shared"
"""A message's kind: ``(SHARED, (pickle, sizes))``, then one descriptor per size (``received``)."""


class _Pickler(pickle.Pickler):
    """Protocol 5, a large array that is not contiguous made contiguous first, so that it too goes
    out of band (numpy pickles a strided array's elements in band)."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is np.ndarray and obj.nbytes >= SHARED_MIN_BYTES and not obj.dtype.hasobject \
                and not (obj.flags.c_contiguous or obj.flags.f_contiguous):
            return np.ascontiguousarray(obj).__reduce_ex__(5)
        return NotImplemented


def send(conn: Connection, obj: Any) -> None:
    """``obj`` over ``conn`` as one ``SHARED`` message, its large buffers as memory files."""
    files: list[tuple[int, int]] = []  # (descriptor, bytes), in the pickle's buffer order

    def in_band(buffer: pickle.PickleBuffer) -> bool:
        view = buffer.raw()
        fd = _memory_file(view) if view.nbytes >= SHARED_MIN_BYTES else None
        if fd is None:
            return True
        files.append((fd, view.nbytes))
        return False

    try:
        data = io.BytesIO()
        _Pickler(data, protocol=5, buffer_callback=in_band).dump(obj)
        conn.send((SHARED, (data.getvalue(), [n for _, n in files])))
        for fd, _ in files:
            send_handle(conn, fd, 0)  # the destination pid is Windows' only (SCM_RIGHTS on a Unix socket)
    finally:
        for fd, _ in files:
            os.close(fd)


def _memory_file(view: memoryview) -> int | None:
    """A memory file holding ``view``'s bytes; None where one cannot be made or written."""
    try:
        fd = os.memfd_create("solar-value", os.MFD_CLOEXEC)
    except (AttributeError, OSError) as e:
        log.debug("no memory file (%s): sent through the pipe", e)
        return None
    try:
        written = 0
        while written < view.nbytes:  # one write is capped at ~2 GiB
            written += os.write(fd, view[written:])
    except OSError as e:  # out of memory for it: through the pipe instead
        log.debug("memory file not written (%s): sent through the pipe", e)
        os.close(fd)
        return None
    return fd


def received(kind: str, payload: Any, conn: Connection) -> Any:
    """The object of a message ``(kind, payload)`` read from ``conn``: a ``SHARED`` message's object,
    its memory files (read from ``conn`` after it) mapped copy-on-write (writable here, never
    written back); any other message's payload as it is."""
    if kind != SHARED:
        return payload
    data, sizes = payload
    buffers = []
    for size in sizes:
        fd = recv_handle(conn)
        try:
            buffers.append(mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE))
        finally:
            os.close(fd)
    return pickle.loads(data, buffers=buffers)
