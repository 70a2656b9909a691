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
