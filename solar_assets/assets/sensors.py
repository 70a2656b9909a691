"""Discovery: a sensor that adds a workload partition for every new file in the workload dir."""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

import dagster as dg

from solar_assets.assets.partitions import WORKLOAD_PARTITIONS_NAME, workload_partitions
from solar_assets.assets.resources import SolarConfig
from solar_assets.workloads import discover_workloads


@dg.sensor(minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.STOPPED)
def workload_files(context: dg.SensorEvaluationContext, solar: SolarConfig) -> dg.SensorResult | dg.SkipReason:
    """Register ``<workload_dir>/*.py`` stems as workload partitions (new files only)."""
    known = set(context.instance.get_dynamic_partitions(WORKLOAD_PARTITIONS_NAME))
    new = [p.stem for p in discover_workloads(solar.workload_dir) if p.stem not in known]
    if not new:
        return dg.SkipReason(f"no new workload files in {solar.workload_dir}")
    return dg.SensorResult(dynamic_partitions_requests=[workload_partitions.build_add_request(new)])
