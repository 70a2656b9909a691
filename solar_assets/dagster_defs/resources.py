"""Where the assets find workloads and hardware specs, and the knobs of a run."""
from __future__ import annotations

from pathlib import Path

import dagster as dg

from solar_assets.chain.config import DEFAULT_NODEWISE_BYTES, RunConfig
from solar_assets.hardware import hardware_dir
from solar_assets.paths import REPO_ROOT, reports_dir, solar_home
from solar_assets.sizing import ValidationBudget

_BUDGET = ValidationBudget()


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
    # The run's options (``solar_assets.chain.RunConfig``), as plain fields Dagster can show and set.
    translator: str = "tracer"
    """"tracer", "agent" or "auto" (``solar --translator``)."""
    framework: str | None = None
    """"torch" or "jax"; None: detected from the file (``solar --framework``)."""
    fp32_math: str = "auto"
    """fp32 matmul policy of the bounds (``solar analyze --fp32-math``)."""
    validation_tensor_bytes: int = _BUDGET.tensor_bytes
    """Validation budget: float64 tensor bytes at one size (over it the size is scaled down)."""
    validation_iterations: int = _BUDGET.iterations
    """Validation budget: kernel iterations of the IR at one size."""
    nodewise_bytes: int = DEFAULT_NODEWISE_BYTES
    """Capture budget of node-wise validation (one forward pass at the file's own size)."""

    @classmethod
    def default(cls, home: str | Path | None = None, workload_dir: str | Path | None = None,
                target_latency_s: float | None = None, run: RunConfig | None = None) -> SolarConfig:
        """The resource for ``home``; the run's options ``run``, else ``RunConfig.from_env()``
        (what ``solar`` exported for this process)."""
        run = run or RunConfig.from_env()
        return cls(
            home=str(solar_home(home)),
            workload_dir=str(Path(workload_dir) if workload_dir else REPO_ROOT / "data" / "workloads"),
            hardware_dir=str(hardware_dir()),
            target_latency_s=target_latency_s,
            translator=run.translator,
            framework=run.framework,
            fp32_math=run.fp32_math,
            validation_tensor_bytes=run.validation_budget.tensor_bytes,
            validation_iterations=run.validation_budget.iterations,
            nodewise_bytes=run.nodewise_bytes,
        )

    @property
    def run_config(self) -> RunConfig:
        """The options the stages take (``solar_assets.chain.stages``)."""
        return RunConfig(translator=self.translator, framework=self.framework, fp32_math=self.fp32_math,
                         validation_budget=ValidationBudget(self.validation_tensor_bytes, self.validation_iterations),
                         nodewise_bytes=self.nodewise_bytes)

    def workload_path(self, key: str) -> Path:
        """The file of a workload partition: from ``workload_files``, else the file of
        ``workload_dir`` whose key it is, else ``<workload_dir>/<key>.py`` (reading it names it)."""
        from solar_assets.dagster_defs.partitions import workload_key
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
        return reports_dir(Path(self.home))
