"""``solar analyze`` as a user runs it: a subprocess, stdout JSON, stderr errors, exit codes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from solar_assets.cli import main

REPO = Path(__file__).resolve().parents[1]
GEMM = "data/workloads/gemm.py"
REQUIRED = ("workload", "hardware", "dtype", "translator", "validated", "max_abs_error", "macs", "flops",
            "bytes_unfused", "bytes_fused", "sol_unfused_s", "sol_fused_s", "bound_unfused", "bound_fused")


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """One SOLAR_HOME for the module: later runs reuse the golden / IR caches."""
    return tmp_path_factory.mktemp("solar_home")


def solar(*args: str, home: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("solar")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "solar_assets.cli"]
    env = {**os.environ, "SOLAR_HOME": str(home)}
    return subprocess.run([*command, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def test_analyze_gemm_json(home):
    done = solar("analyze", GEMM, "--json", home=home)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["rows"]  # stdout is only the JSON report document
    assert set(REQUIRED) <= set(row)
    assert (row["workload"], row["hardware"], row["translator"], row["validated"]) == ("gemm", "H100_SXM", "tracer", True)
    assert row["macs"] == 1024**3
    assert row["bound_fused"] in ("compute", "memory")
    assert {p.name for p in (home / "reports").iterdir()} >= {"report.csv", "report.json", "report.md",
                                                                "report_roofline.png"}
    assert (home / "dagster" / "dagster.yaml").is_file()  # the run went through Dagster's instance


def test_bad_file_and_good_file(home, tmp_path):
    bad = tmp_path / "bad_workload.py"
    bad.write_text("import torch\nthis is not python\n")
    done = solar("analyze", str(bad), GEMM, "--json", home=home)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("solar: error:")]
    assert len(errors) == 1 and str(bad) in errors[0]
    document = json.loads(done.stdout)  # the report document, failures included (report.json's form)
    rows = document["rows"]
    assert [r["workload"] for r in rows] == ["gemm"]
    assert document["schema"] == "solar.report.v2" and document["solar_version"] and document["created"]
    (failure,) = document["failures"]
    assert (failure["workload"], failure["status"]) == ("bad_workload", "failed") and str(bad) in failure["reason"]


@pytest.mark.slow
def test_no_dagster_gives_the_same_rows(home, monkeypatch, capsys):
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    monkeypatch.chdir(REPO)
    outputs = []
    for extra in ([], ["--no-dagster"]):
        assert main(["analyze", GEMM, "--json", "--no-progress", "--hardware", "H100_SXM", "B200", *extra]) == 0
        outputs.append(json.loads(capsys.readouterr().out)["rows"])
    assert outputs[0] == outputs[1] and [r["hardware"] for r in outputs[0]] == ["H100_SXM", "B200"]


def test_table_output_and_hardware_commands(home, monkeypatch, capsys):
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    monkeypatch.chdir(REPO)
    assert main(["analyze", GEMM, "--no-dagster", "--target-latency", "1e-3", "--wide"]) == 0  # the full table
    captured = capsys.readouterr()
    header, _, line = captured.out.splitlines()[:3]
    assert header.split()[:2] == ["workload", "hardware"] and line.split()[:2] == ["gemm", "H100_SXM"]
    assert "need FLOP/s (fused)" in header
    assert "[1/1] gemm: trace…" in captured.err
    assert main(["hardware", "list"]) == 0
    assert "H100_SXM" in capsys.readouterr().out
    assert main(["hardware", "show", "H100_SXM"]) == 0
    assert "3.35e+12 bytes/s" in capsys.readouterr().out
    assert main(["hardware", "show", "NOPE"]) == 2
    assert "unknown hardware 'NOPE'" in capsys.readouterr().err


def test_worker_limits_are_checked_before_any_work(home, monkeypatch, capsys):
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.chdir(REPO)
    assert main(["analyze", GEMM, "--memory-limit", "lots"]) == 2
    assert "--memory-limit 'lots'" in capsys.readouterr().err
    assert main(["analyze", GEMM, "--timeout", "-1"]) == 2
    assert "--timeout must not be negative" in capsys.readouterr().err


def test_the_command_exits_with_its_status_and_its_output_whole(tmp_path):
    """``solar`` ends its process as soon as the work is done (``cli.exit_now``, no interpreter
    teardown): the status is the command's and nothing it printed is lost."""
    listed = solar("hardware", "list", home=tmp_path)
    assert listed.returncode == 0 and "H100_SXM" in listed.stdout and listed.stdout.endswith("\n")
    missing = solar("hardware", "show", "NOPE", home=tmp_path)
    assert missing.returncode == 2 and "NOPE" in missing.stderr
