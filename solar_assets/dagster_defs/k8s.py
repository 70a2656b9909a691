"""solar's jobs on Kubernetes: the four per-partition jobs of ``scale_out`` on dagster-k8s'
``k8s_job_executor`` (every step its own pod), configured by ``deploy/k8s/executor.yaml`` (or the
file ``$SOLAR_K8S_EXECUTOR`` names) as each job's default run config.

The configuration is checked, not only written down: Dagster validates a job's default run config
against its executor's schema as it loads the job, so ``dagster definitions validate -m
solar_assets.dagster_defs.k8s`` fails on a misspelt key (``tests/test_k8s_config.py``). Needs the
``k8s`` extra (``pip install -e '.[k8s]'``); docs/scale_out.md gives the Helm values around it.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from solar_assets.pipeline import REPO_ROOT

EXECUTOR_YAML = REPO_ROOT / "deploy" / "k8s" / "executor.yaml"


def executor_config(path: str | Path | None = None) -> dict[str, Any]:
    """The executor's configuration: ``path``, ``$SOLAR_K8S_EXECUTOR`` or ``deploy/k8s/executor.yaml``."""
    chosen = Path(path or os.environ.get("SOLAR_K8S_EXECUTOR") or EXECUTOR_YAML)
    return yaml.safe_load(chosen.read_text()) or {}


def k8s_definitions(path: str | Path | None = None) -> Any:
    from dagster_k8s import k8s_job_executor

    from solar_assets.dagster_defs.scale_out import scale_out_definitions

    return scale_out_definitions(executor=k8s_job_executor, executor_config=executor_config(path))


defs = k8s_definitions()
