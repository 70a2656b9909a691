"""Where the assets find workloads and hardware specs, and the knobs of a run."""
from __future__ import annotations

from pathlib import Path

import dagster as dg

from solar_assets import pipeline
from solar_assets.hardware import hardware_dir


class SolarConfig(dg.ConfigurableResource):
    """Paths and knobs shared by the assets.

    A workload partition key is a file stem; ``workload_dir`` maps it back to its file.
    """

    home: str
    """SOLAR_HOME: Dagster storage, caches and reports live under it."""
    workload_dir: str
    """Directory holding ``<partition key>.py`` for every workload partition."""
    hardware_dir: str
    """Directory holding ``<partition key>.yaml`` for every hardware partition."""
    target_latency_s: float | None = None
    """Target latency of the inverse roofline, in seconds; None skips it."""

    @classmethod
    def default(cls, home: str | Path | None = None, workload_dir: str | Path | None = None,
                target_latency_s: float | None = None) -> SolarConfig:
        return cls(
            home=str(pipeline.solar_home(home)),
            workload_dir=str(Path(workload_dir) if workload_dir else pipeline.REPO_ROOT / "data" / "workloads"),
            hardware_dir=str(hardware_dir()),
            target_latency_s=target_latency_s,
        )

    def workload_path(self, key: str) -> Path:
        return Path(self.workload_dir) / f"{key}.py"

    @property
    def cache_dir(self) -> Path:
        return Path(self.home) / "cache"

    @property
    def reports_dir(self) -> Path:
        return pipeline.reports_dir(Path(self.home))
