"""The one error the cache-aware bound raises; the other SOL modes never depend on it."""
from __future__ import annotations

from solar_assets.errors import SolarError


class CacheAwareError(SolarError, RuntimeError):
    """The cache-aware bound could not be proven: glpsol missing, an infeasible model or a time limit.

    The message says which, for which workload and capacity, and that the unfused and fused
    bounds are unaffected (they never call the solver).
    """
