"""One figure of one spec edited: the next ``solar analyze`` runs exactly that part's bound assets
(and the report), no trace, golden run or validation, and says so in one line.

Before: the call record's key covered every named spec, so the edit re-traced, re-validated and
re-bounded every file on every part (25 s against 3.5 s unchanged), and no line said why.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dagster_helpers import call_materialisations
from solar_assets.cli import main
from workload_texts import TINY_LINEAR_RELU

REPO = Path(__file__).resolve().parents[1]
CONV = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.relu(self.conv(x))


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, 16, 16)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
"""


@pytest.fixture
def tree(tmp_path, monkeypatch):
    hardware = tmp_path / "hardware"
    hardware.mkdir()
    for name in ("H100_SXM", "B200"):
        shutil.copy(REPO / "hardware" / f"{name}.yaml", hardware / f"{name}.yaml")
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(hardware))
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home" / "dagster"))
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "1_tiny_linear.py").write_text(TINY_LINEAR_RELU)
    (tmp_path / "kb" / "2_conv_relu.py").write_text(CONV)
    return tmp_path


class Spy:
    """The files handed to the worker pool."""

    def __init__(self, monkeypatch):
        import solar_assets.workers as workers

        self.files: list[str] = []
        real = workers.run_in_workers

        def spy(paths, *args, **kwargs):
            self.files += [Path(p).stem for p in paths]
            return real(paths, *args, **kwargs)

        monkeypatch.setattr(workers, "run_in_workers", spy)


def _analyze(tree: Path, capsys, hardware: str = "H100_SXM,B200") -> tuple[dict, str]:
    assert main(["analyze", str(tree / "kb"), "--hardware", hardware, "--no-progress", "--json"]) == 0
    captured = capsys.readouterr()
    rows = {(r["workload"], r["hardware"]): r for r in json.loads(captured.out)["rows"]}
    return rows, captured.err


def _last_run_materialisations(home: Path) -> dict[str, set[str]]:
    from solar_assets.dagster_defs.runner import solar_instance

    with solar_instance(home) as instance:
        return call_materialisations(instance)


def test_a_spec_edit_reruns_only_that_parts_bound_assets(tree, capsys, monkeypatch):
    first, _ = _analyze(tree, capsys)
    spec = tree / "hardware" / "B200.yaml"
    text, n = re.subn(r"^(dram_bytes_per_s:\s*)([0-9.eE+]+)", lambda m: f"{m[1]}{float(m[2]) / 4:.6g}",
                      spec.read_text(), count=1, flags=re.M)
    assert n == 1
    spec.write_text(text)
    spy = Spy(monkeypatch)
    second, err = _analyze(tree, capsys)
    assert spy.files == []  # no worker: nothing ran workload code
    assert ("B200's spec changed since the last call: only its bound assets (cache_aware_bound, sol_bounds) ran "
            "again, for 2 workloads; no trace, golden run or validation") in err
    written = _last_run_materialisations(tree / "home")
    bound = {a for a in written if a not in ("hardware_spec", "headroom_report")}
    assert bound == {"cache_aware_bound", "sol_bounds"}  # inverse_roofline: only with a target
    assert all(p.startswith("B200|") for a in bound for p in written[a]) and len(written["sol_bounds"]) == 2
    assert not {"golden_outputs", "ir_translation", "ir_validation", "einsum_graph"} & set(written)
    for key, row in first.items():  # H100 as it was; B200's memory-bound figures follow the slower DRAM
        again = second[key]
        assert again["macs"] == row["macs"] and again["bytes_unfused"] == row["bytes_unfused"]
        if key[1] == "H100_SXM":
            assert again == row
        else:
            assert again["dram_bytes_per_s"] == pytest.approx(row["dram_bytes_per_s"] / 4)
    # and the next call is warm again
    third, err = _analyze(tree, capsys)
    assert spy.files == [] and third == second and "ran again" not in err


@pytest.mark.slow
def test_a_part_new_to_the_files_is_bounded_alone(tree, capsys, monkeypatch):
    first, _ = _analyze(tree, capsys, "H100_SXM")
    spy = Spy(monkeypatch)
    both, err = _analyze(tree, capsys)
    assert spy.files == []
    assert "B200 is new to these files: only its bound assets" in err
    assert {k: v for k, v in both.items() if k[1] == "H100_SXM"} == first
    assert {w for w, h in both if h == "B200"} == {"1_tiny_linear", "2_conv_relu"}
