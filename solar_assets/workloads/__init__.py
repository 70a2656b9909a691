"""Workload files: find them, hash them, load them as runnable models."""
from solar_assets.workloads.loader import TorchWorkload, WorkloadError, load_torch_workload
from solar_assets.workloads.sizes import (
    SIZE_DECLARATION,
    SizeConstant,
    SizeDeclarationError,
    declared_validation_sizes,
    size_constants,
    size_label,
)
from solar_assets.workloads.source import WorkloadSource, discover_workloads, read_workload_source

__all__ = [
    "SIZE_DECLARATION", "SizeConstant", "SizeDeclarationError", "TorchWorkload", "WorkloadError",
    "WorkloadSource", "declared_validation_sizes", "discover_workloads", "load_torch_workload",
    "read_workload_source", "size_constants", "size_label",
]
