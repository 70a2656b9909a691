"""Workload files: find them, hash them, load them as runnable models."""
from solar_assets.workloads.loader import TorchWorkload, WorkloadError, load_torch_workload
from solar_assets.workloads.source import WorkloadSource, discover_workloads, read_workload_source

__all__ = [
    "TorchWorkload", "WorkloadError", "WorkloadSource", "discover_workloads",
    "load_torch_workload", "read_workload_source",
]
