"""What the asset functions read of a run's configuration, as a plain frozen dataclass.

Dagster's resource ``dagster_defs.resources.SolarConfig`` carries the same fields (Dagster shows
and sets them) and hands this over (``SolarConfig.settings``); a worker of ``solar analyze`` gets it
without importing Dagster. ``tests/test_asset_compute.py`` checks that the two field lists agree.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from solar_assets.chain.config import DEFAULT_NODEWISE_BYTES, RunConfig
from solar_assets.paths import reports_dir
from solar_assets.sizing import ValidationBudget

_BUDGET = ValidationBudget()


@dataclasses.dataclass(frozen=True)
class AssetSettings:
    """Paths and knobs shared by the assets (the fields are documented on ``SolarConfig``)."""

    home: str
    workload_dir: str
    hardware_dir: str
    target_latency_s: float | None = None
    workload_files: dict[str, str] = dataclasses.field(default_factory=dict)
    translator: str = "tracer"
    framework: str | None = None
    fp32_math: str = "auto"
    validation_tensor_bytes: int = _BUDGET.tensor_bytes
    validation_iterations: int = _BUDGET.iterations
    nodewise_bytes: int = DEFAULT_NODEWISE_BYTES
    step_timeout_s: float | None = 600.0
    step_memory_limit: str | None = None

    @classmethod
    def default(cls, home: str | Path | None = None, workload_dir: str | Path | None = None,
                target_latency_s: float | None = None, run: RunConfig | None = None,
                workload_files: dict[str, str] | None = None) -> AssetSettings:
        """The settings for ``home``; the run's options ``run``, else ``RunConfig.from_env()``
        (what ``solar`` exported for this process)."""
        from solar_assets.hardware import hardware_dir
        from solar_assets.paths import REPO_ROOT, solar_home

        run = run or RunConfig.from_env()
        return cls(
            home=str(solar_home(home)),
            workload_dir=str(Path(workload_dir) if workload_dir else REPO_ROOT / "data" / "workloads"),
            hardware_dir=str(hardware_dir()),
            target_latency_s=target_latency_s,
            workload_files=dict(workload_files or {}),
            translator=run.translator,
            framework=run.framework,
            fp32_math=run.fp32_math,
            validation_tensor_bytes=run.validation_budget.tensor_bytes,
            validation_iterations=run.validation_budget.iterations,
            nodewise_bytes=run.nodewise_bytes,
        )

    def as_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @property
    def run_config(self) -> RunConfig:
        """The options the stages take (``solar_assets.chain.stages``)."""
        return RunConfig(translator=self.translator, framework=self.framework, fp32_math=self.fp32_math,
                         validation_budget=ValidationBudget(self.validation_tensor_bytes, self.validation_iterations),
                         nodewise_bytes=self.nodewise_bytes)

    def workload_path(self, key: str) -> Path:
        """The file of a workload partition: from ``workload_files``, else an outside file a call
        analysed (``asset_compute.workload_paths``), else the file of ``workload_dir`` whose key it
        is, else ``<workload_dir>/<key>.py`` (reading it names it)."""
        from solar_assets.asset_compute.keys import workload_key
        from solar_assets.asset_compute.workload_paths import known_paths
        from solar_assets.workloads import discover_workloads

        from solar_assets.asset_compute.keys import split_train_key

        if key in self.workload_files:
            return Path(self.workload_files[key])
        key = split_train_key(key)[0]  # a training step's partition is its file's
        if key in self.workload_files:
            return Path(self.workload_files[key])
        outside = known_paths(self.home).get(key)  # an outside file a call analysed
        if outside is not None:
            return Path(outside)
        plain = Path(self.workload_dir) / f"{key}.py"
        if plain.is_file() and workload_key(plain, self.workload_dir) == key:
            return plain
        for path in discover_workloads(self.workload_dir) if Path(self.workload_dir).is_dir() else ():
            if workload_key(path, self.workload_dir) == key:
                return path
        return plain

    @property
    def cache_dir(self) -> Path:
        return Path(self.home) / "cache"

    @property
    def reports_dir(self) -> Path:
        return reports_dir(Path(self.home))

    @property
    def ski_slope_dir(self) -> Path:
        """Where ``ski_slope`` writes its CSV and PNG."""
        return self.reports_dir / "skislope"


FIELDS = tuple(f.name for f in dataclasses.fields(AssetSettings))
