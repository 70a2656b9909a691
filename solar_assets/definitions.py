"""The one wiring file: solar's assets, resources and sensors as Dagster ``Definitions``.

Storage lives under ``$SOLAR_HOME`` (default ``<repo>/data/solar_home``): asset values in
``storage/`` (pickles, Dagster's filesystem IO manager), caches in ``cache/``, reports in
``reports/``; the Dagster instance is ``$DAGSTER_HOME`` = ``$SOLAR_HOME/dagster``.
"""
from __future__ import annotations

import dagster as dg

from solar_assets import pipeline
from solar_assets.assets.resources import SolarConfig
from solar_assets.assets.sensors import workload_files
from solar_assets.assets.stages import ASSETS


def resources_for(config: SolarConfig) -> dict[str, object]:
    """The resources every materialisation needs (the CLI builds them per workload directory)."""
    return {"solar": config, "io_manager": dg.FilesystemIOManager(base_dir=f"{config.home}/storage")}


defs = dg.Definitions(
    assets=list(ASSETS),
    resources=resources_for(SolarConfig.default(pipeline.solar_home())),
    sensors=[workload_files],
)
