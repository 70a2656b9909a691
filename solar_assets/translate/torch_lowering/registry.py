"""The ATen lowering table (``core.registry``), keyed by the op object (an OpOverloadPacket or
OpOverload), never by name matching."""
from __future__ import annotations

from typing import Any

from solar_assets.translate.core.registry import Lowering, LoweringTable

_TABLE: LoweringTable[Any] = LoweringTable("ATen op")
LOWERINGS = _TABLE.table
lowers = _TABLE.lowers


def find_lowering(target: Any) -> Lowering | None:
    """Exact overload first, then its packet (e.g. aten.add.Tensor, then aten.add)."""
    if target in LOWERINGS:
        return LOWERINGS[target]
    return LOWERINGS.get(getattr(target, "overloadpacket", None))
