"""The validation stage's error: raised beside the stage that decides it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from solar_assets.errors import SolarError

if TYPE_CHECKING:
    from solar_assets.validate.compare import ValidationResult


class ValidationFailed(SolarError):
    """The IR did not reproduce the golden outputs; the message names the file and the output."""

    def __init__(self, message: str, result: ValidationResult | None = None):
        super().__init__(message)
        self.result = result  # the ValidationResult, for its per-output table
