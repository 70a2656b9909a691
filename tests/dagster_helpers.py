"""One way the Dagster tests materialise assets in-process: every asset and source, the run's
resources from ``definitions.resources_for``, quiet loggers, failures returned rather than raised."""
from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import dagster as dg

from solar_assets.dagster_defs.assets import ASSETS
from solar_assets.dagster_defs.runner import QUIET_LOGGERS
from solar_assets.dagster_defs.sources import SOURCE_ASSETS


def materialize(instance, config, selection, partition_key=None, run_config=None):
    from solar_assets.dagster_defs.definitions import resources_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.materialize([*SOURCE_ASSETS, *ASSETS], selection=list(selection), partition_key=partition_key,
                              instance=instance, resources=resources_for(config),
                              run_config={**QUIET_LOGGERS, **(run_config or {})}, raise_on_error=False)


def call_tree(root: Path, hardware: list[str]) -> tuple[Path, Path, Path]:
    """``(hardware dir, workload dir, home)`` under ``root``, the hardware dir holding copies of
    the shipped specs named (a test may edit them)."""
    repo = Path(__file__).resolve().parents[1]
    hardware_dir, workloads, home = root / "hardware", root / "workloads", root / "home"
    hardware_dir.mkdir()
    workloads.mkdir()
    for name in hardware:
        shutil.copy(repo / "hardware" / f"{name}.yaml", hardware_dir / f"{name}.yaml")
    return hardware_dir, workloads, home
