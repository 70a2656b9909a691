"""Compatibility: validation sizing moved to ``solar_assets.sizing`` (its own stage); these names
stay importable from here for existing callers."""
from solar_assets.ir.structure import structure_of  # noqa: F401
from solar_assets.sizing.search import (  # noqa: F401
    MAX_ATTEMPTS,
    ValidationBudget,
    ValidationCost,
    ValidationSize,
    ValidationSizeError,
    check_same_structure,
    choose_validation_size,
    not_a_size,
    program_cost,
    program_sizes,
    reduction_lengths,
    scale_constants,
    scaling_tiers,
    structure_difference,
)
