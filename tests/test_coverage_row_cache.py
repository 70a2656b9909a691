"""A repeat ``solar coverage`` over unchanged files is answered from the row cache: no worker, no torch."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from solar_assets.coverage import runner
from solar_assets.coverage.row_cache import KIND, row_path
from tests.workload_texts import TINY_LINEAR_RELU


@pytest.fixture
def recorded(monkeypatch):
    """run_in_workers replaced by the in-process run, recording which paths it was given."""
    calls: list[list[str]] = []
    real = runner.run_in_workers

    def spy(paths, *args, **kwargs):
        calls.append([str(p) for p in paths])
        return real(paths, *args, **{**kwargs, "jobs": 0})

    monkeypatch.setattr(runner, "run_in_workers", spy)
    return calls


def test_repeat_run_starts_no_worker(tmp_path, recorded):
    path = tmp_path / "tiny_linear.py"
    path.write_text(TINY_LINEAR_RELU)
    cache = tmp_path / "cache"
    first = runner.run_coverage([path], cache, jobs=1)
    assert first[0].validated, first[0].error
    assert recorded == [[str(path)]]
    second = runner.run_coverage([path], cache, jobs=1)
    assert recorded[1] == []  # decided from the cache before any worker
    assert (second[0].validated, second[0].validated_size, second[0].max_abs_error) == \
        (True, first[0].validated_size, first[0].max_abs_error)
    path.write_text(TINY_LINEAR_RELU.replace("8, 32", "4, 32"))  # new bytes: a new key
    third = runner.run_coverage([path], cache, jobs=1)
    assert recorded[2] == [str(path)] and third[0].validated


def test_unfinished_rows_are_not_stored(tmp_path, monkeypatch):
    path = tmp_path / "tiny_linear.py"
    path.write_text(TINY_LINEAR_RELU)

    def timed_out(paths, task, unfinished, cache_dir, **kwargs):
        result = unfinished(str(paths[0]), "timed out after 1 s", 1.0, "trace")
        kwargs["on_result"](0, result)
        return [result]

    monkeypatch.setattr(runner, "run_in_workers", timed_out)
    rows = runner.run_coverage([path], tmp_path / "cache", jobs=1)
    assert not rows[0].translated and "timed out" in rows[0].error
    assert not (tmp_path / "cache" / KIND).exists()


def test_key_needs_no_torch(tmp_path):
    path = tmp_path / "tiny_linear.py"
    path.write_text(TINY_LINEAR_RELU)
    code = ("import sys; from solar_assets.coverage.row_cache import row_path; "
            f"p = row_path({str(tmp_path)!r}, {str(path)!r}); "
            "print(p); assert 'torch' not in sys.modules and 'numba' not in sys.modules")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(row_path(tmp_path, path))
