"""Partitions: a workload is a file stem (dynamic: files come and go), a hardware target is a
spec stem under ``hardware/`` (static: known when the code loads), bounds are per pair."""
from __future__ import annotations

import dagster as dg

from solar_assets.hardware import list_hardware

WORKLOAD_PARTITIONS_NAME = "workload"

workload_partitions = dg.DynamicPartitionsDefinition(name=WORKLOAD_PARTITIONS_NAME)
hardware_partitions = dg.StaticPartitionsDefinition(list_hardware())
workload_on_hardware = dg.MultiPartitionsDefinition(
    {"workload": workload_partitions, "hardware": hardware_partitions}
)


def workload_hardware_key(workload: str, hardware: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"workload": workload, "hardware": hardware})
