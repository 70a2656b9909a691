"""The one wiring file: solar's assets, source files, checks, sensors and schedule as Dagster
``Definitions``.

Storage lives under ``$SOLAR_HOME`` (default ``<repo>/data/solar_home``): asset values in
``storage/`` (pickles, Dagster's filesystem IO manager), caches in ``cache/``, reports in
``reports/``; the Dagster instance is ``$DAGSTER_HOME`` = ``$SOLAR_HOME/dagster``.
``build_definitions`` binds another ``SolarConfig`` (other dirs: tests, a second checkout).
"""
from __future__ import annotations

import dagster as dg

from solar_assets import pipeline
from solar_assets.dagster_defs.instance import resources_for  # noqa: F401 - re-exported
from solar_assets.dagster_defs.automation import (
    SWEEP_JOBS, reanalyse_stale, reanalyse_stale_job, reanalyse_stale_waves, reanalysis_sensor)
from solar_assets.dagster_defs.asset_checks import REPORT_CHECKS
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.sensors import source_files
from solar_assets.dagster_defs.sources import OBSERVE_JOBS, SOURCE_ASSETS
from solar_assets.dagster_defs.assets import ASSETS


def build_definitions(config: SolarConfig) -> dg.Definitions:
    """Every asset, source, check, sensor, schedule and job, bound to ``config``'s dirs."""
    return dg.Definitions(
        assets=[*SOURCE_ASSETS, *ASSETS],
        asset_checks=list(REPORT_CHECKS),
        jobs=[*OBSERVE_JOBS.values(), reanalyse_stale_job, *SWEEP_JOBS],
        resources=resources_for(config),
        sensors=[source_files, reanalysis_sensor, reanalyse_stale_waves],
        schedules=[reanalyse_stale],
    )


defs = build_definitions(SolarConfig.default(pipeline.solar_home()))
