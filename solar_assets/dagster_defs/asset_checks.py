"""Asset checks over the report: the great-expectations suites of ``solar_assets.expectations`` run on
``headroom_report``'s table, so a broken invariant shows as a failed check in the UI, with one
line per failed expectation naming the rows.

``REPORT_CHECKS`` is what the definitions load. They run in the same run that writes the report,
from the UI, the automation and ``solar analyze`` alike (which prints what they said), so a report
never shows "Not evaluated". ``no_sol_violation`` fails when a measured run on this host beat a
provable lower bound (fused, or the cache-aware lower bound: ``solar_assets.measure.audit``).
"""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

from ir_schemas import ReportRow
from solar_assets.dagster_defs.assets import headroom_report

if TYPE_CHECKING:  # pandas is imported where a check runs: loading the definitions stays light
    import pandas as pd

FAILED_VALIDATION_METADATA = "failed validation"


def check_result(failures: list[str], passed: str, checked: int) -> dg.AssetCheckResult:
    """A check result whose description lists the failures (or says what passed)."""
    if failures:
        text = f"{len(failures)} expectation(s) failed:\n" + "\n".join(f"- {f}" for f in failures)
    else:
        text = passed
    return dg.AssetCheckResult(passed=not failures, severity=dg.AssetCheckSeverity.ERROR, description=text,
                               metadata={"rows checked": checked, "failed expectations": len(failures),
                                         "failures": dg.MetadataValue.md(text)})


@dg.asset_check(asset=headroom_report, name="bounds_table", blocking=False,
                description="great-expectations: positive bounds, mode ordering, no unflagged SOL violation.")
def bounds_table(headroom_report: list[ReportRow]) -> dg.AssetCheckResult:
    from solar_assets.report import rows_to_frame

    frame = rows_to_frame(headroom_report)
    failures = suite_failures("bounds_table", frame)
    workloads = len(set(frame["workload"])) if len(frame) else 0
    return check_result(failures, f"all expectations met on the report's {len(frame)} rows ({workloads} workloads "
                        f"analysed in this home, this call's and earlier ones)", len(frame))


def suite_failures(name: str, frame: "pd.DataFrame", cache_dir: str | Path | None = None) -> list[str]:
    """The great-expectations suite ``name`` (``solar_assets.expectations``) on ``frame``, memoised by
    content: a pure function of the table and the suite's code, kept under
    ``<cache>/checks/<name>-<digest>.json`` (``cache_dir``, default ``$SOLAR_HOME/cache``).
    Importing great-expectations and running the suites cost ~6 s of CPU of every ``solar
    analyze`` call; a call whose table did not change (a warm re-run) reads the verdict the same
    table got instead."""
    from solar_assets import expectations, pipeline

    compute: Callable[["pd.DataFrame"], list[str]] = {"bounds_table": expectations.bounds_table_failures,
                                           "all_translated_validated": expectations.validation_failures}[name]
    cache_dir = pipeline.default_cache_dir() if cache_dir is None else cache_dir
    table = frame.to_csv(float_format="%.17g")  # every digit: equal text, equal table
    digest = hashlib.sha256("\0".join([name, pipeline.package_fingerprint("solar_assets.expectations"),
                                        table]).encode()).hexdigest()[:24]
    path = Path(cache_dir) / "checks" / f"{name}-{digest}.json"
    if path.is_file():
        try:
            return list(json.loads(path.read_text())["failures"])
        except (OSError, ValueError, KeyError):  # a damaged entry: evaluate again
            pass
    failures = compute(frame)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"suite": name, "failures": failures}))
    tmp.replace(path)
    return failures


@dg.asset_check(asset=headroom_report, name="all_translated_validated", blocking=False,
                description="great-expectations: every workload that translated validated (100 %).")
def all_translated_validated(context: dg.AssetCheckExecutionContext,
                             headroom_report: list[ReportRow]) -> dg.AssetCheckResult:
    from solar_assets.expectations import validation_frame
    from solar_assets.report import rows_to_frame

    frame = validation_frame(rows_to_frame(headroom_report), failed_validation_of_latest_report(context.instance))
    failures = suite_failures("all_translated_validated", frame)
    return check_result(failures, f"{len(frame)} translated workloads, all validated", len(frame))


def failed_validation_of_latest_report(instance: dg.DagsterInstance) -> list[str]:
    """The workloads the latest report lists as failing validation (its metadata)."""
    event = instance.get_latest_materialization_event(headroom_report.key)
    metadata: Mapping[str, dg.MetadataValue] = (event.asset_materialization.metadata
                                                if event and event.asset_materialization else {})
    value = metadata.get(FAILED_VALIDATION_METADATA)
    return list(value.value) if value is not None and isinstance(value.value, list) else []


@dg.asset_check(asset=headroom_report, name="no_sol_violation", blocking=False,
                additional_deps=["measured_runtime"],
                description="No measured run (measured_runtime) beat a provable lower bound: sol_fused_s or "
                            "sol_cache_aware_lb_s. Runs below unfused or the best modelled schedule are explained, "
                            "not violations.")
def no_sol_violation(headroom_report: list[ReportRow]) -> dg.AssetCheckResult:
    return violation_result(headroom_report)


def violation_result(rows: list[ReportRow]) -> dg.AssetCheckResult:
    """Failed when a row is flagged ``violation`` (``measure.audit.audit``: provable bounds only)."""
    violations = [f"{r.workload} on {r.hardware}: {r.violation_detail}" for r in rows if r.violation]
    measured = sum(1 for r in rows if r.measured_s is not None)
    return check_result(violations, f"{measured} measured row(s), no run below a provable lower bound", len(rows))


REPORT_CHECKS = (bounds_table, all_translated_validated, no_sol_violation)
