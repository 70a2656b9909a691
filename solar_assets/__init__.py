"""solar: validated Speed-of-Light bounds.

``import solar`` is the same package under a friendlier name (the top-level module ``solar``
re-exports this API); ``solar.analyze`` is ``solar_assets.api.analyze``, loaded on first use so
that importing the package stays cheap (no torch, no Dagster).
"""
from __future__ import annotations

from typing import Any

from solar_assets.version import __version__  # noqa: F401

_API = ("analyze", "Analysis", "ValidationTable")


def __getattr__(name: str) -> Any:
    if name in _API:
        from solar_assets import api

        return getattr(api, name)
    raise AttributeError(f"module 'solar_assets' has no attribute {name!r}")
