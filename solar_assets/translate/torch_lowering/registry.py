"""The lowering table: ATen op -> function that emits IR for one graph node.

Keyed by the op object (an OpOverloadPacket or OpOverload), never by name matching;
registering an op twice is a bug and raises; a lookup miss is reported by the tracer by
the op's name, never costed as zero.
"""
from __future__ import annotations

from typing import Any, Callable

Lowering = Callable[..., Any]
LOWERINGS: dict[Any, Lowering] = {}


def lowers(*ops: Any) -> Callable[[Lowering], Lowering]:
    def register(fn: Lowering) -> Lowering:
        for op in ops:
            if op in LOWERINGS:
                raise RuntimeError(f"two lowerings for {op}")
            LOWERINGS[op] = fn
        return fn

    return register


def find_lowering(target: Any) -> Lowering | None:
    """Exact overload first, then its packet (e.g. aten.add.Tensor, then aten.add)."""
    if target in LOWERINGS:
        return LOWERINGS[target]
    packet = getattr(target, "overloadpacket", None)
    return LOWERINGS.get(packet)
