"""Translators from framework source to Affine Loop IR."""
from solar_assets.translate.translation import Translation, TranslationError
from solar_assets.translate.torch_tracer import trace_torch

__all__ = ["Translation", "TranslationError", "trace_torch"]
