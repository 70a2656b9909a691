"""Result shapes of composition steps, shared by the checker, the executor and the lowerings."""
from __future__ import annotations


def topk_shape(shape: tuple[int, ...], axis: int, k: int) -> tuple[int, ...]:
    """``shape`` with ``axis`` cut to ``k``: the shape of a TopK step's values and indices."""
    return tuple(k if d == axis else int(s) for d, s in enumerate(shape))
