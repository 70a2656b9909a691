"""ATen -> Affine Loop IR lowerings; importing this package fills the lowering table."""
from solar_assets.translate.torch_lowering import conv_pool, elementwise, linalg, norms, scans, views  # noqa: F401
from solar_assets.translate.torch_lowering.registry import LOWERINGS, find_lowering

__all__ = ["LOWERINGS", "find_lowering"]
