"""Golden outputs: the workload run by its own framework on seeded inputs, at its validation size."""
from solar_assets.golden.golden import Golden, load_golden, make_golden, save_golden
from solar_assets.sizing import (
    ValidationBudget,
    ValidationCost,
    ValidationSize,
    ValidationSizeError,
    check_same_structure,
    choose_validation_size,
    program_cost,
    structure_difference,
)

__all__ = [
    "Golden", "ValidationBudget", "ValidationCost", "ValidationSize", "ValidationSizeError",
    "check_same_structure", "choose_validation_size", "load_golden", "make_golden", "program_cost",
    "save_golden", "structure_difference",
]
