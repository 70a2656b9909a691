"""``solar coverage DIR``: per-file status and the summary line, without Dagster, with the caches."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from solar_assets.cli import main
from solar_assets.coverage import coverage_summary, format_coverage, run_coverage
from workload_texts import UNLOWERABLE_AIRY

GOOD_LINEAR = '''\
import torch
import torch.nn as nn

BATCH = 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 12)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(BATCH, 16)]


def get_init_inputs():
    return []
'''
GOOD_SOFTMAX = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(4, 10)]


def get_init_inputs():
    return []
'''
BAD_FFT = UNLOWERABLE_AIRY
SLEEPER = '''\
import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + 1


def get_inputs():
    time.sleep(120)
    return [torch.randn(2, 2)]


def get_init_inputs():
    return []
'''


@pytest.fixture(scope="module")
def workloads(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("coverage_workloads")
    for name, text in (("linear", GOOD_LINEAR), ("softmax", GOOD_SOFTMAX), ("spectrum", BAD_FFT)):
        (directory / f"{name}.py").write_text(text)
    return directory


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("solar_home")


def test_rows_in_process(workloads, home):
    rows = run_coverage(sorted(workloads.glob("*.py")), home / "cache", jobs=0)
    by_name = {r.workload: r for r in rows}
    assert [r.workload for r in rows] == ["linear", "softmax", "spectrum"]
    for name in ("linear", "softmax"):
        r = by_name[name]
        assert (r.translated, r.validated, r.validated_size) == (True, True, "full"), r.error
        assert r.max_abs_error < 1e-5 and r.seconds > 0 and r.error is None
    bad = by_name["spectrum"]
    assert (bad.translated, bad.validated, bad.failed_stage) == (False, False, "trace")
    assert bad.unlowered_op == "aten.special_airy_ai.default" and bad.note == "unlowered op aten.special_airy_ai.default"
    assert str(workloads / "spectrum.py") in bad.error
    text = format_coverage(rows)
    assert text.splitlines()[-1] == coverage_summary(rows) == "coverage: 2/3 translated, 2/3 validated"
    spectrum_line = next(line for line in text.splitlines() if line.startswith("spectrum"))
    assert "✗" in spectrum_line and "aten.special_airy_ai.default" in spectrum_line


def test_cli_table(workloads, home, capsys):
    assert main(["coverage", str(workloads), "--home", str(home), "--jobs", "0"]) == 0  # failures: still 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[-1] == "coverage: 2/3 translated, 2/3 validated"
    assert lines[0].split()[:3] == ["workload", "translated", "validated"]
    assert "[3/3] spectrum: translated ✗, validated ✗" in err


@pytest.mark.slow
def test_cli_json_in_a_worker_with_a_time_limit(workloads, home, tmp_path, capsys):
    """Worker processes: a file past its time limit gets a row of its own; the report still exits 0."""
    directory = tmp_path / "with_sleeper"
    directory.mkdir()
    (directory / "linear.py").write_text(GOOD_LINEAR)
    (directory / "zz_sleeper.py").write_text(SLEEPER)
    code = main(["coverage", str(directory), "--home", str(home), "--json", "--jobs", "1", "--timeout", "10",
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0
    report = json.loads(out)  # stdout is only the JSON object
    assert (report["total"], report["translated"], report["validated"]) == (2, 1, 1), report["rows"][0]["error"]
    assert report["summary"] == "coverage: 1/2 translated, 1/2 validated" == err.strip().splitlines()[-1]
    linear, sleeper = report["rows"]
    assert linear["validated"] and linear["validated_size"] == "full"
    assert not sleeper["translated"] and "timed out after 10 s during trace" in sleeper["error"]
    assert str(directory / "zz_sleeper.py") in sleeper["error"]


def test_no_workloads_is_an_error(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["coverage", str(empty), "--home", str(tmp_path / "home")]) == 2
    assert "no workload files" in capsys.readouterr().err
