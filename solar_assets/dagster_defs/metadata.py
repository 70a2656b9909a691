"""The UI metadata as Dagster values: ``to_dagster`` converts what ``solar_assets.asset_compute``
built as plain data (``solar_assets.asset_compute.metadata``, where the formatting rules and their
reasons live), when an asset's step returns or when ``solar analyze`` writes a worker's events.
"""
from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

from solar_assets.asset_compute.metadata import *  # noqa: F401,F403  (the helpers, for the assets and tests)
from solar_assets.asset_compute.metadata import FilePath, Json, Markdown, Number, Table, Text, Value


def to_dagster_value(value: Value | dg.MetadataValue) -> dg.MetadataValue | int | str | bool | float:
    """One entry as Dagster stores it (ints, strings and bools as they are: Dagster takes them raw)."""
    if isinstance(value, Text):
        return dg.MetadataValue.text(value.text)
    if isinstance(value, Markdown):
        return dg.MetadataValue.md(value.value)
    if isinstance(value, Number):
        return dg.MetadataValue.float(float(value.value))
    if isinstance(value, FilePath):
        return dg.MetadataValue.path(value.path)
    if isinstance(value, Json):
        return dg.MetadataValue.json(value.value)
    if isinstance(value, Table):
        schema = dg.TableSchema([dg.TableColumn(c.name, c.kind, description=c.description)
                                 for c in value.schema.columns])
        return dg.MetadataValue.table([dg.TableRecord(dict(r.data)) for r in value.records], schema=schema)
    return value


def to_dagster(metadata: Mapping[str, Value | dg.MetadataValue]) -> dict[str, object]:
    """An asset partition's metadata (``asset_compute.metadata.Metadata``) for ``dg.Output`` or an event."""
    return {key: to_dagster_value(value) for key, value in metadata.items()}
