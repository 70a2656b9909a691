"""Large framework values reach the checker through /dev/shm (``workers.shared_values``): the
same values as through the pipe, no file left behind, and the pipe where shared memory fails."""
from __future__ import annotations

import os

import numpy as np
import pytest

from solar_assets.workers import shared_values
from solar_assets.workers.shared_values import VALUE, VALUE_FILE, SHARED_MIN_BYTES, Shipments, received


@pytest.mark.skipif(not os.path.isdir(shared_values.SHARED_DIR), reason="no /dev/shm here")
def test_a_large_value_goes_through_a_shared_file_and_comes_back_equal_and_writable():
    value = np.random.default_rng(0).standard_normal((SHARED_MIN_BYTES // 8 + 3, 2))[:, 1]  # not contiguous
    shipped = Shipments()
    kind, payload = shipped.message(value)
    assert kind == VALUE_FILE and os.path.exists(payload[0])
    got = received(kind, payload)
    assert not os.path.exists(payload[0])  # unlinked once mapped
    assert isinstance(got, np.ndarray) and got.dtype == value.dtype and np.array_equal(got, value)
    got[0] = 42.0  # copy-on-write: the checker may write its copy
    assert got[0] == 42.0
    shipped.clear()


def test_small_values_and_other_objects_go_through_the_pipe():
    shipped = Shipments()
    small = np.arange(10.0)
    assert shipped.message(small) == (VALUE, small)
    assert shipped.message(None) == (VALUE, None)
    assert received(VALUE, small) is small and shipped.paths == []


def test_no_shared_memory_falls_back_to_the_pipe(monkeypatch, tmp_path):
    monkeypatch.setattr(shared_values, "SHARED_DIR", str(tmp_path / "missing"))
    value = np.zeros(SHARED_MIN_BYTES // 8 + 1)
    assert Shipments().message(value)[0] == VALUE


def test_a_file_the_checker_never_took_is_removed(monkeypatch, tmp_path):
    monkeypatch.setattr(shared_values, "SHARED_DIR", str(tmp_path))
    shipped = Shipments()
    kind, (path, _, _) = shipped.message(np.ones(SHARED_MIN_BYTES // 8 + 1, dtype=np.float64))
    assert kind == VALUE_FILE and os.path.exists(path)
    shipped.clear()
    assert not os.listdir(tmp_path)
