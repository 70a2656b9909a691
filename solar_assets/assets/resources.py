"""Where the assets find workloads and hardware specs, and the knobs of a run."""
from __future__ import annotations

from pathlib import Path

import dagster as dg

from solar_assets import pipeline
from solar_assets.hardware import hardware_dir


class SolarConfig(dg.ConfigurableResource):
    """Paths and knobs shared by the assets.

    A workload partition key names a file (``partitions.workload_key``): ``workload_files`` maps
    the keys of a run's files to them, and any other key is looked up in ``workload_dir``.
    """

    home: str
    """SOLAR_HOME: Dagster storage, caches and reports live under it."""
    workload_dir: str
    """Directory holding ``<partition key>.py`` for every workload partition."""
    hardware_dir: str
    """Directory holding ``<partition key>.yaml`` for every hardware partition."""
    target_latency_s: float | None = None
    """Target latency of the inverse roofline, in seconds; None skips it."""
    workload_files: dict[str, str] = {}
    """Partition key -> workload file, for files named by ``solar analyze`` (any directory)."""

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
        """The file of a workload partition: from ``workload_files``, else the file of
        ``workload_dir`` whose key it is, else ``<workload_dir>/<key>.py`` (reading it names it)."""
        from solar_assets.assets.partitions import workload_key
        from solar_assets.workloads import discover_workloads

        if key in self.workload_files:
            return Path(self.workload_files[key])
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
        return pipeline.reports_dir(Path(self.home))
