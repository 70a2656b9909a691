"""The shape of a partitioned asset read whole, and the Dagster type that checks it.

An unpartitioned asset (``headroom_report``) that reads a partitioned one gets, from Dagster's
filesystem IO manager, a dict by partition key, but the bare value when exactly one partition
exists, and None when none does. Dagster resolves no such ``Union`` from an annotation, so the
asset annotates the input with ``ByPartition[X]`` (for readers and type checkers) and names the
runtime check in its ``AssetIn(dagster_type=by_partition_type(X))``.
"""
# no `from __future__ import annotations`: the alias is evaluated at runtime by the assets

from typing import TypeVar, Union

import dagster as dg

T = TypeVar("T")

ByPartition = Union[dict[str, T], T, None]  # a generic alias: subscripted per input
"""``{partition key: value}``, the bare value of the only partition, or None (no partition)."""

_TYPES: dict[tuple[type, bool], dg.DagsterType] = {}


def by_partition_type(kind: type, *, optional: bool = False) -> dg.DagsterType:
    """The Dagster type of a ``ByPartition[kind]`` input: every value an instance of ``kind``
    (or None where ``optional``: an asset that outputs None, e.g. ``inverse_roofline`` with no
    target). One instance per kind: Dagster wants one type per name."""
    key = (kind, optional)
    if key not in _TYPES:
        def check(_context: dg.TypeCheckContext, value: object) -> dg.TypeCheck:
            if value is None:
                return dg.TypeCheck(success=True)
            values = list(value.values()) if isinstance(value, dict) else [value]
            bad = [type(v).__name__ for v in values if not (isinstance(v, kind) or (optional and v is None))]
            return dg.TypeCheck(success=not bad, description=f"not {kind.__name__}: {', '.join(sorted(set(bad)))}"
                                if bad else None)

        suffix = " | None" if optional else ""
        _TYPES[key] = dg.DagsterType(type_check_fn=check, name=f"ByPartition[{kind.__name__}{suffix}]",
                                     description=by_partition_type.__doc__)
    return _TYPES[key]
