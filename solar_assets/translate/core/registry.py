"""A lowering table: a framework's op key -> the function that emits IR for one op.

Each frontend holds one (``torch_lowering.registry``: keyed by the ATen op object;
``jax_lowering.registry``: by the primitive's name). Registering a key twice is a bug and raises;
a lookup miss is reported by the tracer by the op's name, never costed as zero.
"""
from __future__ import annotations

from typing import Callable, Generic, Hashable, TypeVar

Lowering = Callable[..., object]
Key = TypeVar("Key", bound=Hashable)


class LoweringTable(Generic[Key]):
    def __init__(self, what: str) -> None:
        self.what = what
        self.table: dict[Key, Lowering] = {}

    def lowers(self, *keys: Key) -> Callable[[Lowering], Lowering]:
        """Decorator: ``fn`` lowers each of ``keys``."""
        def register(fn: Lowering) -> Lowering:
            for key in keys:
                if key in self.table:
                    raise RuntimeError(f"two lowerings for {self.what} {key}")
                self.table[key] = fn
            return fn

        return register

    def get(self, key: Key) -> Lowering | None:
        return self.table.get(key)
