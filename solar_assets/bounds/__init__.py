"""The bounds stage: unfused, fused and whole-graph roofline bounds, and the inverse roofline."""
from solar_assets.bounds.sol import (
    CODE_VERSION,
    Bound,
    BoundsError,
    InverseBound,
    InverseRoofline,
    NodeBound,
    RooflineHardware,
    SolBounds,
    hardware_label,
    inverse_roofline,
    sol_bounds,
)

__all__ = [
    "CODE_VERSION", "Bound", "BoundsError", "InverseBound", "InverseRoofline", "NodeBound",
    "RooflineHardware", "SolBounds", "hardware_label", "inverse_roofline", "sol_bounds",
]
