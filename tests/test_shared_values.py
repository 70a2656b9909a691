"""Large framework values reach the checker as anonymous memory files (``workers.shared_values``):
the same values as through the pipe, nothing another process can find by name, and the pipe
where a memory file cannot be made."""
from __future__ import annotations

import os
import socket
from multiprocessing.connection import Connection

import numpy as np
import pytest

from solar_assets.workers import shared_values
from solar_assets.workers.shared_values import SHARED_MIN_BYTES, VALUE, VALUE_FD, Shipments, received


@pytest.fixture
def pipe():
    a, b = socket.socketpair()
    ends = Connection(a.detach()), Connection(b.detach())
    yield ends
    for end in ends:
        end.close()


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="no memfd_create here")
def test_a_large_value_goes_as_a_memory_file_and_comes_back_equal_and_writable(pipe):
    worker, checker = pipe
    value = np.random.default_rng(0).standard_normal((SHARED_MIN_BYTES // 8 + 3, 2))[:, 1]  # not contiguous
    named_before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    shipped = Shipments()
    shipped.send(worker, value)
    kind, payload = checker.recv()
    assert kind == VALUE_FD
    if os.path.isdir("/dev/shm"):
        assert set(os.listdir("/dev/shm")) == named_before  # no name another workload could open
    got = received(kind, payload, checker)
    shipped.clear()
    assert isinstance(got, np.ndarray) and got.dtype == value.dtype and np.array_equal(got, value)
    got[0] = 42.0  # copy-on-write: the checker may write its copy
    assert got[0] == 42.0 and value[0] != 42.0


def test_small_values_and_other_objects_go_through_the_pipe(pipe):
    worker, checker = pipe
    shipped = Shipments()
    for value in (np.arange(10.0), None):
        shipped.send(worker, value)
        kind, payload = checker.recv()
        assert kind == VALUE and received(kind, payload, checker) is payload
        assert (payload is None) == (value is None)
    assert shipped.fds == []


def test_no_memory_file_falls_back_to_the_pipe(pipe, monkeypatch):
    worker, checker = pipe
    monkeypatch.delattr(os, "memfd_create", raising=False)
    monkeypatch.setattr(shared_values, "SHARED_MIN_BYTES", 1024)  # a value the pipe's buffer holds
    value = np.zeros(1024 // 8 + 1)  # (no reader runs while this thread sends)
    Shipments().send(worker, value)
    kind, payload = checker.recv()
    assert kind == VALUE and np.array_equal(payload, value)
