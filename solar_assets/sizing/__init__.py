"""The validation size: the file's own size where validating it is cheap, a smaller one where not.

Its own package because three stages read it: the chain chooses the size, the golden run and
the validation happen at it, and the agent translator checks its candidates within its budget.
It imports only the workload-size reader and the IR (``solar_assets.ir.structure``)."""
from solar_assets.sizing.search import (
    ValidationBudget,
    ValidationCost,
    ValidationSize,
    ValidationSizeError,
    check_same_structure,
    choose_validation_size,
    crossed_order,
    not_a_size,
    program_cost,
    reduction_lengths,
    scale_constants,
    structure_difference,
)

__all__ = [
    "ValidationBudget", "ValidationCost", "ValidationSize", "ValidationSizeError", "check_same_structure",
    "choose_validation_size", "crossed_order", "not_a_size", "program_cost", "reduction_lengths", "scale_constants", "structure_difference",
]
