"""Accepted validation verdicts on disk, so an unchanged workload is not executed again.

Validation is deterministic given the IR that ran, the golden outputs and the executor and
comparison code: ``pipeline.validate_translation`` keys a verdict by the program's content hash,
the source hash, the rebound constants and those packages' sources, and stores only verdicts
that passed (a failure is re-run, so its diagnostics are always fresh). A hit skips the IR's
execution, numba compilation included: the second analysis of an unchanged file takes
milliseconds for this stage.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solar_assets import cache_store
from solar_assets.ir.digest import program_digest  # noqa: F401  (the key of a verdict's IR; callers import it here)

if TYPE_CHECKING:
    from solar_assets.validate.compare import ValidationResult

# What a verdict depends on besides the program and the source: the golden run, the executor
# (kernels, einsum path) and the comparison (tolerances).
VERDICT_PACKAGES = ("solar_assets.execute", "solar_assets.validate", "solar_assets.golden", "solar_assets.workloads")


def load_verdict(path: Path | None) -> ValidationResult | None:
    """The ``ValidationResult`` stored at ``path``, or None: no entry, or one that is torn, fails
    its digest or does not parse (deleted with a warning by ``cache_store``: validate again)."""
    from solar_assets.validate.compare import OutputCheck, ValidationResult

    def decode(data: dict[str, Any]) -> ValidationResult:
        checks = [OutputCheck(**{**c, "shape": tuple(c["shape"]), "golden_shape": tuple(c["golden_shape"])})
                  for c in data["checks"]]
        return ValidationResult(ok=data["ok"], checks=checks, max_abs_error=data["max_abs_error"],
                                max_rel_error=data["max_rel_error"], seconds=data["seconds"],
                                notes=list(data.get("notes", [])))

    return cache_store.load_json(path, decode)


def _plain(value: Any) -> Any:
    """NumPy scalars (``np.float64``, ``np.bool_``) as Python ones."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in a verdict")


def save_verdict(path: Path | None, result: ValidationResult) -> None:
    """Store a passed ``ValidationResult`` at ``path`` with its digest (failures are not stored)."""
    if path is None or not result.ok:
        return
    cache_store.store(path, json.dumps(asdict(result), default=_plain))
