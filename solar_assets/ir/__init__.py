"""Reading the Affine Loop IR: parse its expressions, check a program, digest it, print it."""
from solar_assets.ir.expr import (
    SCALAR_FUNCTIONS,
    Access,
    Affine,
    Indirect,
    ParsedKernel,
    parse_kernel,
)
from solar_assets.ir.checker import check_program
from solar_assets.ir.digest import program_digest
from solar_assets.ir.printer import format_kernel, format_program, format_step

__all__ = [
    "SCALAR_FUNCTIONS", "Access", "Affine", "Indirect", "ParsedKernel", "parse_kernel",
    "check_program", "program_digest", "format_kernel", "format_program", "format_step",
]
