"""The Kubernetes variant of docs/scale_out.md is configuration Dagster checks: ``dagster
definitions validate`` loads ``solar_assets.dagster_defs.k8s`` (the per-partition jobs on
dagster-k8s' ``k8s_job_executor``, ``deploy/k8s/executor.yaml`` as their default run config) and
passes; the same file with one key misspelt fails, naming the key."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def _validate(tmp_path: Path, executor_yaml: Path | None = None) -> subprocess.CompletedProcess:
    pytest.importorskip("dagster_k8s", reason="pip install -e '.[k8s]' (make test does)")
    home = tmp_path / "dagster"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "DAGSTER_HOME": str(home), "SOLAR_HOME": str(tmp_path / "home")}
    env.pop("SOLAR_K8S_EXECUTOR", None)
    if executor_yaml is not None:
        env["SOLAR_K8S_EXECUTOR"] = str(executor_yaml)
    dagster = Path(sys.executable).with_name("dagster")
    return subprocess.run([str(dagster), "definitions", "validate", "-m", "solar_assets.dagster_defs.k8s"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


@pytest.mark.slow
def test_the_shipped_kubernetes_configuration_validates(tmp_path: Path) -> None:
    done = _validate(tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Validation successful for code location solar_assets.dagster_defs.k8s" in done.stdout + done.stderr


@pytest.mark.slow
def test_a_misspelt_key_fails_validation(tmp_path: Path) -> None:
    config = yaml.safe_load((REPO / "deploy" / "k8s" / "executor.yaml").read_text())
    config["job_namespac"] = config.pop("job_namespace")
    bad = tmp_path / "executor.yaml"
    bad.write_text(yaml.safe_dump(config))
    done = _validate(tmp_path, bad)
    assert done.returncode != 0
    assert 'unexpected config entry "job_namespac"' in done.stdout + done.stderr
