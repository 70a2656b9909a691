"""Partitions: a workload is a file, a hardware target a spec stem under the hardware dir, and
bounds are per pair.

A workload's partition key is derived from its path (``asset_compute.keys.workload_key``, written
without Dagster so the CLI derives keys before importing it): the file's stem for a file in the
configured workload dir, else the stem and 8 hex digits of its resolved path; the key is stable
across runs and readable, and the report shows the file's printable name (``workload_name``).

Both axes are *dynamic* partitions: files come and go while the code location stays loaded, so
the ``source_files`` sensor (and ``solar analyze``, for what it is given) registers new stems
instead of a code reload. It also keeps a test or a second checkout with its own hardware dir
to exactly its own specs, where a static list would carry every spec of this repo.
"""
from __future__ import annotations

import dagster as dg

from solar_assets.asset_compute.keys import escape_key, workload_key  # noqa: F401  (the keys, without Dagster)

WORKLOAD_PARTITIONS_NAME = "workload"
HARDWARE_PARTITIONS_NAME = "hardware"

workload_partitions = dg.DynamicPartitionsDefinition(name=WORKLOAD_PARTITIONS_NAME)
hardware_partitions = dg.DynamicPartitionsDefinition(name=HARDWARE_PARTITIONS_NAME)
workload_on_hardware = dg.MultiPartitionsDefinition(
    {"workload": workload_partitions, "hardware": hardware_partitions}
)

# ``measured_runtime``: a workload run on this host by one backend. The keys name the framework
# too, so a torch file's partitions are the torch ones (``backend_key``); the ``measure`` package
# runs on the host's CPU, and has no CUDA runner yet, so no CUDA key is offered (a key that could
# only fail would look like a measurement in the UI).
BACKEND_KEYS = {"torch_eager": ("torch", "eager"), "torch_compile": ("torch", "compile"),
                "jax_eager": ("jax", "eager"), "jax_jit": ("jax", "compile")}
backend_partitions = dg.StaticPartitionsDefinition(list(BACKEND_KEYS))
workload_on_backend = dg.MultiPartitionsDefinition({"workload": workload_partitions, "backend": backend_partitions})


def backend_key(framework: str, backend: str) -> str:
    """The ``backend`` partition key of ``solar_assets.measure``'s (framework, backend)."""
    for key, pair in BACKEND_KEYS.items():
        if pair == (framework, backend):
            return key
    raise KeyError(f"no measured_runtime partition for {framework} {backend}")


def workload_backend_key(workload: str, backend: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"workload": workload, "backend": backend})


def workload_hardware_key(workload: str, hardware: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"workload": workload, "hardware": hardware})


def register_partitions(instance: dg.DagsterInstance, workloads: list[str] | tuple[str, ...] = (),
                        hardware: list[str] | tuple[str, ...] = ()) -> None:
    """Add the workload and hardware stems the instance does not know yet. Another process (a
    second home on the same Postgres database) may add the same key meanwhile: the unique
    constraint then refuses the batch, and the keys still missing are added again. One query per
    dimension for what is known (one per key was 1.8 s of a warm call over 270 files)."""
    for name, keys in ((WORKLOAD_PARTITIONS_NAME, workloads), (HARDWARE_PARTITIONS_NAME, hardware)):
        if not keys:
            continue
        for attempt in range(3):
            new = sorted(set(keys) - set(instance.get_dynamic_partitions(name)))
            if not new:
                break
            try:
                instance.add_dynamic_partitions(name, new)
                break
            except Exception as e:  # noqa: BLE001 - SQLAlchemy's IntegrityError, whichever dialect
                if attempt == 2 or "unique" not in str(e).lower() and "duplicate" not in str(e).lower():
                    raise
