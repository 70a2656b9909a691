"""ATen -> Affine Loop IR lowerings; importing this package fills the lowering table."""
from solar_assets.translate.torch_lowering import (  # noqa: F401
    attention, complex_ops, control, conv_pool, data_shaped, elementwise, factorizations, indexing, linalg, norms, recurrent, resample,
    scaled_mm, scans, views,
)
from solar_assets.translate.torch_lowering.registry import LOWERINGS, find_lowering

__all__ = ["LOWERINGS", "find_lowering"]
