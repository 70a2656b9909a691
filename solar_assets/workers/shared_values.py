"""Large framework values from a worker to its checker through shared memory, not the pipe.

Node-wise validation sends the checker every value an op group reads or writes, whole (the
checker evaluates the IR at points of them and compares). Pickled through the socket, a value is
copied four times (pickle, socket write, socket read, unpickle): for KernelBench's BigBird at
sequence length 4095 (attention scores of 12×4096² in float64) that was 110 s of the worker's
280 s. Here a value of at least ``SHARED_MIN_BYTES`` is written once to a file in ``/dev/shm``
(memory, not disk) and the checker maps it copy-on-write and unlinks it: one copy in all.

Where ``/dev/shm`` is missing or full (a container's 64 MiB default), the value goes by pickle as
before. A file the checker never took (it died) is removed by the worker when the request ends
(``Shipments.clear``).
"""
from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

SHARED_DIR = "/dev/shm"
SHARED_MIN_BYTES = 1 << 20
VALUE, VALUE_FILE = "value", "value_file"


class Shipments:
    """The files one worker wrote for its checker, removed once the checker answered."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def message(self, value: Any) -> tuple[str, Any]:
        """(VALUE, value) or, for a large array, (VALUE_FILE, (path, dtype, shape))."""
        if not isinstance(value, np.ndarray) or value.nbytes < SHARED_MIN_BYTES or value.dtype.hasobject \
                or not os.path.isdir(SHARED_DIR):
            return VALUE, value
        fd, path = tempfile.mkstemp(prefix="solar-value-", dir=SHARED_DIR)
        try:
            with os.fdopen(fd, "wb") as f:
                np.ascontiguousarray(value).tofile(f)
        except OSError as e:  # full (a small /dev/shm): through the pipe instead
            log.debug("shared value not written (%s): sent through the pipe", e)
            with contextlib.suppress(OSError):
                os.unlink(path)
            return VALUE, value
        self.paths.append(path)
        return VALUE_FILE, (path, value.dtype.str, tuple(value.shape))

    def clear(self) -> None:
        for path in self.paths:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        self.paths.clear()


def received(kind: str, payload: Any) -> Any:
    """The value of a (VALUE | VALUE_FILE, payload) message: a shared file is mapped copy-on-write
    (writable for the checker, never written back) and unlinked at once."""
    if kind != VALUE_FILE:
        return payload
    path, dtype, shape = payload
    try:
        return np.memmap(path, dtype=np.dtype(dtype), mode="c", shape=tuple(shape)).view(np.ndarray)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
