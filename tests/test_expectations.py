"""The great-expectations suites on hand-made tables: the failures they name, the same whether the
first run or ``warm_up`` set the context up, call after call on the one context they share
(issue 16: the suites' set-up is paid once per process, not per call), and from several threads."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pandas as pd

from solar_assets import expectations
from solar_assets.expectations import suites


def _table(**changes: dict[str, object]) -> pd.DataFrame:
    """Two rows of a consistent bounds table (fused ≤ whole-graph ≤ per-einsum time, fused ≤
    unfused bytes), with ``changes``: row name -> {column: value}."""
    rows = {"a": {"sol_fused_s": 1e-6, "sol_unfused_graph_s": 2e-6, "sol_unfused_s": 3e-6,
                  "bytes_fused": 100, "bytes_unfused": 300},
            "b": {"sol_fused_s": 4e-6, "sol_unfused_graph_s": 4e-6, "sol_unfused_s": 5e-6,
                  "bytes_fused": 200, "bytes_unfused": 200}}
    for name, values in changes.items():
        rows[name].update(values)
    return pd.DataFrame([{"workload": name, "hardware": "X", "validated": True, **row} for name, row in rows.items()])


NEGATIVE_FUSED = ("expect_column_values_to_be_between (column=sol_fused_s): sol_fused_s must be positive; "
                  "1 row(s) fail: a@X (values -1)")
FUSED_OVER_UNFUSED = ("expect_column_pair_values_a_to_be_greater_than_b (column_A=bytes_unfused, column_B=bytes_fused): "
                      "bytes_fused ≤ bytes_unfused: graph I/O cannot exceed every einsum's own traffic; "
                      "1 row(s) fail: b@X (values (200, 250))")


def _verdicts() -> list[list[str]]:
    """Good, bad, good again, and a table without the byte columns (a second suite)."""
    bad = _table(a={"sol_fused_s": -1.0}, b={"bytes_fused": 250})
    return [expectations.bounds_table_failures(_table()), expectations.bounds_table_failures(bad),
            expectations.bounds_table_failures(_table()),
            expectations.bounds_table_failures(bad.drop(columns=["bytes_fused", "bytes_unfused"]))]


def test_failures_named_before_and_after_warm_up_and_nothing_carried_between_calls():
    first = _verdicts()  # the first run sets the context up itself
    assert first == [[], [NEGATIVE_FUSED, FUSED_OVER_UNFUSED], [], [NEGATIVE_FUSED]]
    expectations.warm_up()
    suites_built = len(suites._STATE.suites)
    expectations.warm_up()  # idempotent: nothing built again
    assert len(suites._STATE.suites) == suites_built
    assert _verdicts() == first and _verdicts() == first
    assert len(suites._STATE.suites) == suites_built  # each table's suite built once, then reused


def test_validation_suite_names_the_workloads_that_failed_validation():
    rows = pd.DataFrame({"workload": ["a", "b", "b"], "hardware": ["X", "X", "Y"], "validated": [True, True, False]})
    frame = expectations.validation_frame(rows, failed_validation=["c"])
    assert frame.to_dict("list") == {"workload": ["a", "b", "c"], "translated": [True] * 3,
                                     "validated": [True, False, False]}
    expected = ["expect_column_values_to_be_in_set (column=validated): 100 % of the workloads that translated must "
                "validate; 2 row(s) fail: b, c (values False, False)"]
    assert expectations.validation_failures(frame) == expected
    assert expectations.validation_failures(frame) == expected
    assert expectations.validation_failures(expectations.validation_frame(rows.iloc[:2])) == []


def test_suites_from_several_threads_give_the_sequential_verdicts():
    workers = 4
    expected = _verdicts()
    with ThreadPoolExecutor(workers) as pool:
        verdicts = list(pool.map(lambda _: _verdicts(), range(2 * workers)))
    assert verdicts == [expected] * (2 * workers)
