"""The JAX lowering table (``core.registry``), keyed by the primitive's name
(``eqn.primitive.name``: jaxprs name their primitives, and the name is what JAX prints)."""
from __future__ import annotations

from solar_assets.translate.core.registry import LoweringTable

_TABLE: LoweringTable[str] = LoweringTable("JAX primitive")
LOWERINGS = _TABLE.table
lowers = _TABLE.lowers
find_lowering = _TABLE.get
