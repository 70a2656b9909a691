"""Large arrays reach the checker as anonymous memory files (``workers.shared_values``): the same
values as through the pipe, inside whatever object carries them, nothing another process can find
by name, no descriptor left open in the sender, and the pipe where a memory file cannot be made."""
from __future__ import annotations

import dataclasses
import os
import socket
from multiprocessing.connection import Connection

import numpy as np
import pytest

from solar_assets.workers import shared_values
from solar_assets.workers.shared_values import SHARED, SHARED_MIN_BYTES, received, send

needs_memfd = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="no memfd_create here")


@pytest.fixture
def pipe():
    a, b = socket.socketpair()
    ends = Connection(a.detach()), Connection(b.detach())
    yield ends
    for end in ends:
        end.close()


def _open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


@dataclasses.dataclass
class _Carrier:  # the shape of a validation request: arrays inside a dataclass inside a tuple
    inputs: list
    params: dict
    note: str


@needs_memfd
def test_large_arrays_go_as_memory_files_and_come_back_equal_and_writable(pipe):
    worker, checker = pipe
    rng = np.random.default_rng(0)
    strided = rng.standard_normal((SHARED_MIN_BYTES // 8 + 3, 2))[:, 1]  # not contiguous
    big = rng.standard_normal((SHARED_MIN_BYTES // 4 + 5,)).astype(np.float32)
    fortran = np.asfortranarray(rng.standard_normal((513, 600)))
    small = np.arange(10.0)
    obj = ("program", _Carrier([strided, small], {"param:w": big, "param:f": fortran}, "n"), "src", True)
    named_before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    open_before = _open_descriptors()

    send(worker, obj)

    assert _open_descriptors() == open_before  # the sender keeps no descriptor once sent
    if os.path.isdir("/dev/shm"):
        assert set(os.listdir("/dev/shm")) == named_before  # no name another workload could open
    kind, payload = checker.recv()
    assert kind == SHARED and len(payload[1]) == 3  # three arrays out of band, the small one in the pickle
    assert len(payload[0]) < SHARED_MIN_BYTES
    got = received(kind, payload, checker)
    assert got[0] == "program" and got[2:] == ("src", True) and got[1].note == "n"
    pairs = [(got[1].inputs[0], strided), (got[1].inputs[1], small), (got[1].params["param:w"], big),
             (got[1].params["param:f"], fortran)]
    for value, sent in pairs:
        assert isinstance(value, np.ndarray) and value.dtype == sent.dtype and value.shape == sent.shape
        assert np.array_equal(value, sent)
    copy = got[1].params["param:w"]
    copy[0] = 42.0  # copy-on-write: the checker may write its copy, the worker's stays
    assert copy[0] == 42.0 and big[0] != 42.0


def test_small_objects_go_in_the_pickle(pipe):
    worker, checker = pipe
    for value in (np.arange(10.0), None, ("counts", 3)):
        send(worker, value)
        kind, payload = checker.recv()
        assert kind == SHARED and payload[1] == []
        got = received(kind, payload, checker)
        assert (got is None) if value is None else np.array_equal(np.asarray(got, dtype=object),
                                                                   np.asarray(value, dtype=object))


def test_other_messages_pass_through(pipe):
    worker, checker = pipe
    worker.send(("failed", "ValueError: x"))
    kind, payload = checker.recv()
    assert received(kind, payload, checker) == "ValueError: x"


def test_no_memory_file_falls_back_to_the_pipe(pipe, monkeypatch):
    worker, checker = pipe
    monkeypatch.delattr(os, "memfd_create", raising=False)
    monkeypatch.setattr(shared_values, "SHARED_MIN_BYTES", 1024)  # a value the pipe's buffer holds
    value = np.arange(1024 // 8 + 1, dtype=np.float64)  # (no reader runs while this thread sends)
    send(worker, value)
    kind, payload = checker.recv()
    assert kind == SHARED and payload[1] == []
    assert np.array_equal(received(kind, payload, checker), value)
