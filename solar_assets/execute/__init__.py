"""Execute Affine Loop IR: numba-compiled loop nests (einsum for sums of products), NumPy views."""
from solar_assets.execute.cache import cache_dir, load_kernel
from solar_assets.execute.codegen import KernelPlan, kernel_source, plan_kernel
from solar_assets.execute.einsum_path import EinsumPlan, plan_einsum
from solar_assets.execute.interpreter import (
    ExecutionError,
    Executor,
    ProgramInterpreter,
    StepRecord,
    execute_program,
    numpy_dtype,
)

__all__ = [
    "EinsumPlan", "ExecutionError", "Executor", "KernelPlan", "ProgramInterpreter", "StepRecord",
    "cache_dir", "execute_program", "kernel_source", "load_kernel", "numpy_dtype", "plan_einsum",
    "plan_kernel",
]
