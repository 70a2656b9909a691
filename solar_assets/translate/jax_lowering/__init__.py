"""JAX primitive -> Affine Loop IR lowerings; importing this package fills the lowering table."""
from solar_assets.translate.jax_lowering import control, elementwise, indexing, linalg, reductions, views  # noqa: F401
from solar_assets.translate.jax_lowering.registry import LOWERINGS, find_lowering
from solar_assets.translate.jax_lowering.walk import PrimitiveError, run_jaxpr, source_line

__all__ = ["LOWERINGS", "PrimitiveError", "find_lowering", "run_jaxpr", "source_line"]
