"""Validate an IR program: run it on the golden inputs and compare every output."""
from solar_assets.validate.compare import (
    TOLERANCES,
    OutputCheck,
    ValidationResult,
    compare_outputs,
    tolerance_for,
    validate_program,
)

__all__ = ["TOLERANCES", "OutputCheck", "ValidationResult", "compare_outputs", "tolerance_for", "validate_program"]
