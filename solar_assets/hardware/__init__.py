"""Hardware specs: one strict, sourced YAML per accelerator under ``hardware/``."""

from solar_assets.hardware.spec import (
    DTYPES,
    DType,
    HardwareError,
    HardwareSpec,
    PeakTable,
    canonical_dtype,
    hardware_dir,
    list_hardware,
    load_all_hardware,
    load_hardware,
    parse_hardware,
)

__all__ = [
    "DTYPES",
    "DType",
    "HardwareError",
    "HardwareSpec",
    "PeakTable",
    "canonical_dtype",
    "hardware_dir",
    "list_hardware",
    "load_all_hardware",
    "load_hardware",
    "parse_hardware",
]
