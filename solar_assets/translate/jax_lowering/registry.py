"""The lowering table: JAX primitive name -> function that emits IR for one jaxpr equation.

Keyed by the primitive's name (``eqn.primitive.name``: jaxprs name their primitives, and the
name is what JAX prints); registering a name twice is a bug and raises. A lookup miss is
reported by the tracer with the primitive's name and its source line, never costed as zero.
"""
from __future__ import annotations

from typing import Any, Callable

Lowering = Callable[..., Any]
LOWERINGS: dict[str, Lowering] = {}


def lowers(*names: str) -> Callable[[Lowering], Lowering]:
    def register(fn: Lowering) -> Lowering:
        for name in names:
            if name in LOWERINGS:
                raise RuntimeError(f"two lowerings for JAX primitive {name}")
            LOWERINGS[name] = fn
        return fn

    return register


def find_lowering(name: str) -> Lowering | None:
    return LOWERINGS.get(name)
