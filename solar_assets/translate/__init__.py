"""Translators from framework source to Affine Loop IR.

``trace_torch`` is imported on first use, so that the JAX path (``translate.jax_tracer``) never
loads torch."""
from __future__ import annotations

from typing import Any

from solar_assets.translate.translation import Translation, TranslationError

__all__ = ["Translation", "TranslationError", "trace_torch"]


def __getattr__(name: str) -> Any:
    if name == "trace_torch":
        from solar_assets.translate.torch_tracer import trace_torch

        return trace_torch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
