"""solar's version, at the bottom of the package (the report document records it)."""
from __future__ import annotations


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("solar")
    except metadata.PackageNotFoundError:  # a source checkout that is not installed
        return "0.1.0+source"


__version__ = _version()
