"""The automation conditions the derived assets carry (``REANALYSE``, ``REPORT``): when a
materialised partition re-runs by itself. Kept apart from ``automation`` (the sensor, the sweep)
so the assets that carry them and the sweep that materialises the assets import in one
direction only. ``automation``'s docstring says what they mean."""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

import dagster as dg

AC = dg.AutomationCondition

_changed = AC.code_version_changed() | AC.any_deps_match(AC.data_version_changed())
_pending = (_changed.since_last_handled() & ~AC.missing()).with_label("pending re-analysis")
_upstream_busy = AC.any_deps_match(
    AC.will_be_requested() | _pending | AC.any_deps_match(AC.will_be_requested() | _pending)
).with_label("an input (or its input) is about to change")
_waits = ~AC.any_deps_in_progress() & ~AC.in_progress() & ~_upstream_busy

REANALYSE = (
    _changed.since_last_handled().with_label("code or upstream data changed since last handled")
    & ~AC.missing() & ~AC.any_deps_missing() & _waits
).with_label("re-analyse when stale")
"""For partitioned assets: re-run a materialised partition whose inputs' data or code changed."""

REPORT = (
    _changed.since_last_handled().with_label("code or upstream data changed since last handled")
    & ~AC.missing() & _waits
).with_label("re-write the report when a bound changed")
"""For the report: like ``REANALYSE`` but a missing partition upstream does not block it (the
report shows what exists)."""
