"""``--fresh-workers``: a discarded process per file, the strict form of the isolation.

Data a file mutates in place inside a framework has no identity for the tamper snapshot to
compare; in a reused worker it could reach the next file's golden run (never its verdict: the
checker). A fresh worker per file leaves nothing behind to reach it.
"""
from __future__ import annotations

import pytest

from solar_assets.cli import main

WRITES_PID = """\
import os

import torch
import torch.nn as nn

with open({out!r}, "a") as f:
    f.write(f"{{os.getpid()}}\\n")


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0


def get_inputs():
    return [torch.randn(4, 4)]


def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("plain", [True, False], ids=["no-dagster", "dagster"])
@pytest.mark.slow
def test_each_file_gets_a_worker_of_its_own(tmp_path, monkeypatch, plain):
    monkeypatch.setenv("SOLAR_FRESH_WORKERS", "")  # off; and restored after the test (the CLI exports it)
    pids = tmp_path / "pids.txt"
    (tmp_path / "kb").mkdir()
    for name in ("a_first", "b_second", "c_third"):
        (tmp_path / "kb" / f"{name}.py").write_text(WRITES_PID.format(out=str(pids)))
    seen = []
    for extra in ([], ["--fresh-workers"]):  # each on a fresh home: the files run (no cache answers)
        home = tmp_path / f"home{len(seen)}"
        monkeypatch.setenv("SOLAR_HOME", str(home))
        monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
        assert main(["analyze", str(tmp_path / "kb"), "--hardware", "H100_SXM", "--no-progress", "--jobs", "1",
                     *(["--no-dagster"] if plain else []), *extra]) == 0
        seen.append(pids.read_text().split())
        pids.unlink()
    reused, fresh = seen
    assert len(set(reused)) == 1  # by default one worker serves file after file
    assert len(set(fresh)) == 3 and not set(fresh) & set(reused)  # one process per file


_HELD: list[bytearray] = []


def _holding_task(path: str, cache_dir, task_arg) -> tuple[int, int]:
    """Keeps ``task_arg`` MiB alive in the worker after the file (as a leak would), touched page by
    page; returns its process id and its tree's resident bytes before that."""
    import os

    from solar_assets.workers.limits import process_tree_rss_bytes

    before = process_tree_rss_bytes(os.getpid())
    _HELD.append(bytearray(b"\x01") * (task_arg << 20))
    return os.getpid(), before


def _unfinished(path, message, seconds, stage):
    return message


@pytest.mark.slow
def test_a_worker_left_holding_memory_is_replaced_before_the_next_file(tmp_path, monkeypatch):
    """A file's peak must not stack on what the previous file left resident: past ``RECYCLE_BYTES``
    after a file, the worker is replaced; under it, one worker serves every file."""
    from solar_assets.workers import pool

    paths = [str(tmp_path / f"{n}.py") for n in "abc"]
    monkeypatch.setattr(pool, "RECYCLE_BYTES", 64 << 30)
    plain = pool.run_in_workers(paths, _holding_task, _unfinished, jobs=1, task_arg=0)
    assert len({pid for pid, _ in plain}) == 1
    # 200 MiB over what a worker holds by itself: a file leaving 400 MiB behind crosses it, none leaving nothing
    monkeypatch.setattr(pool, "RECYCLE_BYTES", max(rss for _, rss in plain) + (200 << 20))
    assert len({pid for pid, _ in pool.run_in_workers(paths, _holding_task, _unfinished, jobs=1, task_arg=0)}) == 1
    assert len({pid for pid, _ in pool.run_in_workers(paths, _holding_task, _unfinished, jobs=1, task_arg=400)}) == 3
