"""``jax.random`` draws with the generator fixed, as ``solar_assets.workloads.in_forward`` fixes
PyTorch's: a draw's values are the uniform pattern ``0.5 + 0.5·sin(RANDOM_FREQ·k + RANDOM_PHASE)``
(``k`` the flat row-major index) on both sides, the IR here and the golden run
(``golden.jax_random``), so validation compares the same computation on the same values.

The keys themselves (``random_seed``, ``random_wrap`` / ``random_unwrap``, and what moves them:
``split``, ``fold_in``, slicing a key array) carry no data the pattern needs: they lower to a
``RandomKey`` placeholder, so two draws from split keys see the same pattern, on both sides. A draw is taken at the level JAX draws
floats: the ``_uniform`` call (under ``uniform``, ``normal``, ``gumbel``, ``categorical`` …: what
they compute from it lowers as written) and ``random_gamma``. Its traffic is the generated tensor
(one kernel that reads nothing and writes it), not the key or a seed table. Raw ``random_bits``
stay refused (bit streams: ``translate.out_of_scope``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.workloads.in_forward import random_pattern_expr

UNIFORM_CALL = "_uniform"
"""The jitted helper every float draw of ``jax.random`` goes through."""
KEY_PRIMITIVES = ("random_seed", "random_wrap", "random_unwrap")
DRAW_PRIMITIVES = ("random_gamma",)
KEY_MOVES = ("random_split", "random_fold_in", "slice", "squeeze", "reshape", "broadcast_in_dim", "concatenate",
             "gather", "dynamic_slice", "convert_element_type", "copy", "copy_p")
"""Equations that move keys (``walk.key_plumbing`` gives their results as keys)."""


@dataclass(frozen=True)
class RandomKey:
    """A PRNG key (or its raw data): its values never reach the IR."""


@lowers(*KEY_PRIMITIVES)
def key_lowering(c: JCtx, *args: Any, **params: Any) -> RandomKey:
    return RandomKey()


def _pattern(c: JCtx) -> str:
    shape = tuple(int(d) for d in c.aval().shape)
    return random_pattern_expr("uniform", [f"i{k}" for k in range(len(shape))], shape)


def uniform_draw(c: JCtx, key: Any, minval: Any, maxval: Any) -> Any:
    """``_uniform(key, minval, maxval)``: ``max(minval, minval + (maxval - minval)·u)``, as JAX
    scales its floats in [0, 1)."""
    if not isinstance(key, RandomKey):
        raise LoweringGap("a uniform draw from a key the IR does not know")
    return c.elementwise(f"max({{0}}, {{0}} + ({{1}} - {{0}}) * ({_pattern(c)}))", minval, maxval)


@lowers("random_gamma")
def gamma_lowering(c: JCtx, key: Any, alpha: Any, *, log_space: bool = False, **_: Any) -> Any:
    """A Gamma(alpha) draw as ``alpha·u`` (positive, scaled by its shape), its log in log space."""
    template = f"{{0}} * ({_pattern(c)})"
    return c.elementwise(f"log({template})" if log_space else template, alpha)
