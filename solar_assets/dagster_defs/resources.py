"""Where the assets find workloads and hardware specs, and the knobs of a run."""
from __future__ import annotations

from pathlib import Path

import dagster as dg

from solar_assets.asset_compute.settings import FIELDS, AssetSettings
from solar_assets.chain.config import RunConfig

_DEFAULTS = AssetSettings(home="", workload_dir="", hardware_dir="")  # the knobs' defaults, in one place


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
    translator: str = _DEFAULTS.translator
    """"tracer", "agent" or "auto" (``solar --translator``)."""
    framework: str | None = _DEFAULTS.framework
    """"torch" or "jax"; None: detected from the file (``solar --framework``)."""
    fp32_math: str = _DEFAULTS.fp32_math
    """fp32 matmul policy of the bounds (``solar analyze --fp32-math``)."""
    validation_tensor_bytes: int = _DEFAULTS.validation_tensor_bytes
    """Validation budget: float64 tensor bytes at one size (over it the size is scaled down)."""
    validation_iterations: int = _DEFAULTS.validation_iterations
    """Validation budget: kernel iterations of the IR at one size."""
    nodewise_bytes: int = _DEFAULTS.nodewise_bytes
    """Capture budget of node-wise validation (one forward pass at the file's own size)."""
    step_timeout_s: float | None = _DEFAULTS.step_timeout_s
    """Time limit of a step that runs workload code (its worker: ``asset_compute.isolated``); None: none."""
    step_memory_limit: str | None = _DEFAULTS.step_memory_limit
    """Resident-memory limit of that worker: "75%" of the machine's (None, the default), "8G", or "0" for none."""

    @classmethod
    def default(cls, home: str | Path | None = None, workload_dir: str | Path | None = None,
                target_latency_s: float | None = None, run: RunConfig | None = None) -> SolarConfig:
        """The resource for ``home``; the run's options ``run``, else ``RunConfig.from_env()``
        (what ``solar`` exported for this process)."""
        return cls(**AssetSettings.default(home, workload_dir, target_latency_s, run).as_dict())

    @property
    def settings(self) -> AssetSettings:
        """The same fields as the plain settings the asset functions take (``solar_assets.asset_compute``)."""
        return AssetSettings(**{name: getattr(self, name) for name in FIELDS})

    @property
    def run_config(self) -> RunConfig:
        """The options the stages take (``solar_assets.chain.stages``)."""
        return self.settings.run_config

    def workload_path(self, key: str) -> Path:
        return self.settings.workload_path(key)

    @property
    def cache_dir(self) -> Path:
        return self.settings.cache_dir

    @property
    def reports_dir(self) -> Path:
        return self.settings.reports_dir
