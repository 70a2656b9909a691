"""Hardware specs: one strict, sourced YAML per accelerator under ``hardware/``."""

from solar_assets.hardware.spec import (
    DTYPES,
    DType,
    HardwareError,
    HardwareSpec,
    PeakTable,
    canonical_dtype,
    canonical_hardware_name,
    hardware_dir,
    hardware_dirs,
    list_hardware,
    load_all_hardware,
    load_hardware,
    parse_hardware,
    shipped_hardware_dir,
    user_hardware_dir,
)

__all__ = [
    "DTYPES",
    "DType",
    "HardwareError",
    "HardwareSpec",
    "PeakTable",
    "canonical_dtype",
    "canonical_hardware_name",
    "hardware_dir",
    "hardware_dirs",
    "shipped_hardware_dir",
    "user_hardware_dir",
    "list_hardware",
    "load_all_hardware",
    "load_hardware",
    "parse_hardware",
]
