"""Jobs for running solar's assets out of process: one job per partitions definition (Dagster runs
one partition per run), on the multiprocess executor. ``tests/test_postgres.py`` runs them on a
PostgreSQL instance; docs/scale_out.md shows the same definitions on the Kubernetes executor.

Each ``*_job`` function is a zero-argument module-level function so that
``dg.reconstructable`` can rebuild the job in each step process (the executor imports this
module by name). The solar resource is bound to ``$SOLAR_HOME`` as in ``definitions.py``.
"""
from __future__ import annotations

import dagster as dg

WORKLOAD_STAGES = ("workload_source", "golden_outputs", "ir_translation", "ir_validation", "einsum_graph")
BOUND_STAGES = ("sol_bounds", "cache_aware_bound")
MAX_CONCURRENT = 2


def scale_out_definitions(max_concurrent: int = MAX_CONCURRENT) -> dg.Definitions:
    """solar's assets with four jobs (hardware, workload, bounds, report) on the multiprocess executor."""
    from solar_assets import pipeline
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.sources import SOURCE_ASSETS
    from solar_assets.dagster_defs.assets import ASSETS
    from solar_assets.dagster_defs.instance import resources_for

    jobs = [dg.define_asset_job("solar_hardware", selection=["hardware_spec"]),
            dg.define_asset_job("solar_workload", selection=list(WORKLOAD_STAGES)),
            dg.define_asset_job("solar_bounds", selection=list(BOUND_STAGES)),
            dg.define_asset_job("solar_report", selection=["headroom_report"])]
    return dg.Definitions(assets=[*SOURCE_ASSETS, *ASSETS], jobs=jobs,
                          resources=resources_for(SolarConfig.default(pipeline.solar_home())),
                          executor=dg.multiprocess_executor.configured({"max_concurrent": max_concurrent}))


def hardware_job() -> dg.JobDefinition:
    return scale_out_definitions().resolve_job_def("solar_hardware")


def workload_job() -> dg.JobDefinition:
    return scale_out_definitions().resolve_job_def("solar_workload")


def bounds_job() -> dg.JobDefinition:
    return scale_out_definitions().resolve_job_def("solar_bounds")


def report_job() -> dg.JobDefinition:
    return scale_out_definitions().resolve_job_def("solar_report")
