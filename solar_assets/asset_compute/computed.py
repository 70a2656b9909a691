"""The result of one asset function: what Dagster's ``Output`` carries, as plain data."""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Generic, TypeVar

from solar_assets.asset_compute.metadata import Metadata

V = TypeVar("V")


@dataclasses.dataclass(frozen=True)
class Computed(Generic[V]):
    """An asset partition's value, its data version (a content hash: staleness follows the data,
    not the clock) and its UI metadata."""

    value: V
    data_version: str
    metadata: Metadata = dataclasses.field(default_factory=dict)


def digest(*parts: str | bytes) -> str:
    """16 hex digits of the sha256 of ``parts``: a data version."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
    return h.hexdigest()[:16]
