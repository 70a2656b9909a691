"""A cold ``solar analyze`` prints no library's INFO lines: great-expectations sets its own INFO
level on ``data_context.types.base`` at import and logged "Created temporary directory '/tmp/…'
for ephemeral docs site" on every cold call, although other libraries' loggers stay at WARNING."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workload_texts import TINY_LINEAR_RELU

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_cold_call_prints_no_great_expectations_line(tmp_path):
    workload = tmp_path / "tiny_linear.py"
    workload.write_text(TINY_LINEAR_RELU)
    env = {**os.environ, "SOLAR_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "home" / "dagster"),
           "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "solar_assets", "analyze", str(workload), "--hardware", "H100_SXM",
                           "--no-progress"], capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tiny_linear" in done.stdout
    assert "great_expectations" not in done.stderr and "Created temporary directory" not in done.stderr, done.stderr
