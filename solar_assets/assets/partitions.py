"""Partitions: a workload is a file stem under the workload dir, a hardware target a spec stem
under the hardware dir, and bounds are per pair.

Both axes are *dynamic* partitions: files come and go while the code location stays loaded, so
the ``source_files`` sensor (and ``solar analyze``, for what it is given) registers new stems
instead of a code reload. It also keeps a test or a second checkout with its own hardware dir
to exactly its own specs, where a static list would carry every spec of this repo.
"""
from __future__ import annotations

import dagster as dg

WORKLOAD_PARTITIONS_NAME = "workload"
HARDWARE_PARTITIONS_NAME = "hardware"

workload_partitions = dg.DynamicPartitionsDefinition(name=WORKLOAD_PARTITIONS_NAME)
hardware_partitions = dg.DynamicPartitionsDefinition(name=HARDWARE_PARTITIONS_NAME)
workload_on_hardware = dg.MultiPartitionsDefinition(
    {"workload": workload_partitions, "hardware": hardware_partitions}
)


def workload_hardware_key(workload: str, hardware: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"workload": workload, "hardware": hardware})


def register_partitions(instance: dg.DagsterInstance, workloads: list[str] | tuple[str, ...] = (),
                        hardware: list[str] | tuple[str, ...] = ()) -> None:
    """Add the workload and hardware stems the instance does not know yet."""
    for name, keys in ((WORKLOAD_PARTITIONS_NAME, workloads), (HARDWARE_PARTITIONS_NAME, hardware)):
        new = sorted({k for k in keys if not instance.has_dynamic_partition(name, k)})
        if new:
            instance.add_dynamic_partitions(name, new)
