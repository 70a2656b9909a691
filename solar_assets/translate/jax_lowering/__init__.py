"""JAX primitive -> Affine Loop IR lowerings; importing this package fills the lowering table."""
from solar_assets.translate.jax_lowering import (  # noqa: F401
    complex_ops, control, elementwise, factorizations, indexing, linalg, pooling, random, reductions, selection,
    views,
)
from solar_assets.translate.jax_lowering.registry import LOWERINGS, find_lowering
from solar_assets.translate.jax_lowering.walk import PrimitiveError, run_jaxpr, source_line

__all__ = ["LOWERINGS", "PrimitiveError", "find_lowering", "run_jaxpr", "source_line"]
