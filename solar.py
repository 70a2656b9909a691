"""``import solar``: the package ``solar_assets`` under the distribution's name (an alias, never a copy).

    import solar
    result = solar.analyze(model, [x], hardware=["H100_SXM"])
    result.to_pandas(); result.per_op.to_pandas(); print(result.ir)

``python -m solar`` is the ``solar`` command. Everything else is ``solar_assets``: attribute
lookups this module does not define are forwarded to it (``solar.pipeline``, ``solar.report``).
"""
from __future__ import annotations

import importlib
import sys
from typing import Any

import solar_assets
from solar_assets import __version__

__all__ = ["Analysis", "ValidationTable", "__version__", "analyze"]


def __getattr__(name: str) -> Any:
    if name in solar_assets._API:
        return getattr(solar_assets, name)
    try:
        return importlib.import_module(f"solar_assets.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"solar_assets.{name}":
            raise
    raise AttributeError(f"module 'solar' has no attribute {name!r}")


if __name__ == "__main__":
    from solar_assets.cli import main

    sys.exit(main())
