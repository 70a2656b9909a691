"""Data-quality suites over solar's tables (great-expectations), as plain functions:
a DataFrame in, the failed expectations out as readable lines (empty: all passed).

No Dagster here: ``solar_assets.dagster_defs.asset_checks`` runs them as asset checks. great-expectations is
imported when a suite runs (its import takes seconds), never when this package is imported; ``warm_up()``
pays that and the context's set-up ahead (once per process: the suites then share one context).
"""
from solar_assets.expectations.suites import (
    BOUNDS_TABLE_SUITE,
    VALIDATION_SUITE,
    bounds_table_failures,
    validation_failures,
    validation_frame,
    warm_up,
)

__all__ = ["BOUNDS_TABLE_SUITE", "VALIDATION_SUITE", "bounds_table_failures", "validation_failures",
           "validation_frame", "warm_up"]
