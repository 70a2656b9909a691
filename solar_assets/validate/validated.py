"""What the validation stage hands on: an IR that passed, with how and at what size."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ir_schemas import Program
    from solar_assets.translate import Translation
    from solar_assets.validate.compare import ValidationResult


@dataclass(frozen=True)
class ValidatedIR:
    """An IR program that passed validation, with where it came from and how well it matched.

    ``program`` is the full-size IR (what is analysed); ``validated_program`` the IR that ran, at
    ``validated_size`` ("full", the rebound constants such as "BATCH=3,DIM=64", or "node-wise …", at
    the file's own size or "… at BATCH=63" where one pass at that size did not fit node-wise)."""

    translation: Translation
    result: ValidationResult
    validated_size: str = "full"
    validated_program: Program | None = None  # None: the full-size program itself

    @property
    def program(self) -> Program:
        return self.translation.program


def validation_summary(result: ValidationResult) -> str:
    """The failing outputs, one clause each: ``out0: max abs error 3.1 > 1e-4 (...)``."""
    bad = [c for c in result.checks if not c.ok]
    if not bad:
        return f"max abs error {result.max_abs_error:.3g}, max rel error {result.max_rel_error:.3g}"
    return "; ".join(f"{c.name}: {c.message}" for c in bad)
