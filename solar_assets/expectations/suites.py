"""The great-expectations suites over the report table (``rows_to_frame`` of ``ReportRow``s).

- ``bounds_table_failures``: every bound and byte count positive; the modes in order
  (fused ≤ cache-aware lower bound ≤ cache-aware (best modelled schedule) ≤ unfused-tiled bytes,
  fused ≤ whole-graph unfused ≤ unfused time, fused ≤ cache-aware lower bound ≤ cache-aware
  time); and, where measured columns exist, no unflagged SOL violation (a run faster than a
  provable lower bound — fused or the cache-aware lower bound, never the achievable cache-aware
  figure — must carry ``violation`` and a ``violation_detail``).
  The cache-aware bytes may exceed ``bytes_unfused`` when tiling-bound (the buffer forces
  re-reads; ``cache_aware_note`` says so): that is not checked against, on purpose.
- ``validation_failures``: every workload that translated validated (100 %).

Columns a table lacks are skipped (older reports, rows without the measured fields); a column
that exists is checked. Derived columns (e.g. ``unflagged_violation``) are computed with pandas
and named so the failure line says what was wrong.
"""
from __future__ import annotations

import gc
import logging
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

logger = logging.getLogger(__name__)

# A run may beat a bound by rounding only: relative slack for the violation audit.
VIOLATION_RTOL = 1e-9
# Times are float sums taken in different orders (Σ max(...) vs max(Σ, Σ)): equal bounds may
# differ in the last bits, so a time ordering allows this relative slack; bytes are exact.
ORDER_RTOL = 1e-9


@dataclass(frozen=True)
class Expectation:
    """One great-expectations expectation, by class name and kwargs, with its reason in words."""

    kind: str
    kwargs: dict[str, Any]
    why: str

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(v for k, v in self.kwargs.items() if k in ("column", "column_A", "column_B"))


POSITIVE_COLUMNS = ("sol_unfused_s", "sol_fused_s", "sol_unfused_graph_s", "sol_cache_aware_s",
                    "sol_cache_aware_lb_s", "bytes_unfused", "bytes_fused", "bytes_cache_aware",
                    "bytes_cache_aware_lb", "bytes_unfused_tiled", "peak_flop_per_s", "dram_bytes_per_s")
# (smaller, larger, why): the mode ordering that holds for true lower bounds.
ORDERED_PAIRS = (
    ("bytes_fused", "bytes_unfused", "graph I/O cannot exceed every einsum's own traffic"),
    ("bytes_fused", "bytes_cache_aware_lb", "the cache-aware lower bound includes the compulsory traffic"),
    ("bytes_cache_aware_lb", "bytes_cache_aware", "no schedule, the best modelled one included, beats the "
                                                  "provable lower bound"),
    ("bytes_fused", "bytes_cache_aware", "a finite buffer cannot beat the infinite one"),
    ("bytes_cache_aware", "bytes_unfused_tiled", "the best segmentation is no worse than no fusion"),
    ("sol_fused_s", "sol_unfused_graph_s", "fused ≤ whole-graph unfused time"),
    ("sol_unfused_graph_s", "sol_unfused_s", "whole-graph form ≤ per-einsum sum"),
    ("sol_fused_s", "sol_cache_aware_lb_s", "fused ≤ cache-aware lower bound time"),
    ("sol_cache_aware_lb_s", "sol_cache_aware_s", "cache-aware lower bound ≤ best modelled schedule time"),
    ("sol_fused_s", "sol_cache_aware_s", "fused ≤ cache-aware time"),
)


def _bounds_expectations(frame: pd.DataFrame) -> list[Expectation]:
    out = [Expectation("ExpectColumnValuesToBeBetween", {"column": c, "min_value": 0, "strict_min": True},
                       f"{c} must be positive") for c in POSITIVE_COLUMNS if c in frame]
    for small, big, why in ORDERED_PAIRS:
        if small not in frame or big not in frame:
            continue
        slack = big.endswith("_s")
        out.append(Expectation("ExpectColumnPairValuesAToBeGreaterThanB",
                               {"column_A": _slack_column(big) if slack else big, "column_B": small, "or_equal": True,
                                "ignore_row_if": "either_value_is_missing"},
                               f"{small} ≤ {big}{f' (relative slack {ORDER_RTOL:g})' if slack else ''}: {why}"))
    if "unflagged_violation" in frame:
        out.append(Expectation("ExpectColumnValuesToBeInSet", {"column": "unflagged_violation", "value_set": [False]},
                               "a run faster than a lower bound must be flagged (violation) with its detail"))
    return out


def _slack_column(column: str) -> str:
    return f"{column}_with_slack"


def _with_order_slack(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``<time>_with_slack`` = time × (1 + ORDER_RTOL) for the larger side of each time ordering."""
    out = frame.copy()
    for _, big, _ in ORDERED_PAIRS:
        if big.endswith("_s") and big in frame:
            out[_slack_column(big)] = pd.to_numeric(frame[big], errors="coerce") * (1 + ORDER_RTOL)
    return out


BOUNDS_TABLE_SUITE = "solar_bounds_table"
VALIDATION_SUITE = "solar_validation"


def _with_violation_audit(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``unflagged_violation``: the fastest measured run beat the fused bound or the cache-aware
    lower bound (provable figures only; the achievable cache-aware figure judges nothing) but the
    row does not say so (``violation`` False, or no ``violation_detail``). Only when the measured
    columns exist."""
    if "violation" not in frame or not ({"measured_min_s", "measured_s"} & set(frame)):
        return frame
    measured = frame["measured_min_s"] if "measured_min_s" in frame else frame["measured_s"]
    if "measured_min_s" in frame and "measured_s" in frame:
        measured = frame["measured_min_s"].where(frame["measured_min_s"].notna(), frame["measured_s"])
    measured = pd.to_numeric(measured, errors="coerce")
    lower = pd.to_numeric(frame["sol_fused_s"], errors="coerce")
    if "sol_cache_aware_lb_s" in frame:
        lower = pd.concat([lower, pd.to_numeric(frame["sol_cache_aware_lb_s"], errors="coerce")], axis=1).max(axis=1)
    beats = measured.notna() & (measured < lower * (1 - VIOLATION_RTOL))
    flagged = frame["violation"].fillna(False).astype(bool)
    if "violation_detail" in frame:
        flagged &= frame["violation_detail"].fillna("").astype(str).str.len() > 0
    out = frame.copy()
    out["unflagged_violation"] = (beats & ~flagged).astype(bool)
    return out


def bounds_table_failures(frame: pd.DataFrame) -> list[str]:
    """The failed expectations of the bounds suite on the report table, one readable line each."""
    frame = _with_order_slack(_with_violation_audit(frame))
    return _run_suite(BOUNDS_TABLE_SUITE, frame, _bounds_expectations(frame), label=_row_label(frame))


def validation_frame(rows: pd.DataFrame, failed_validation: list[str] | tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per workload that translated: ``workload``, ``translated`` (True), ``validated``.
    ``rows``: the report table; ``failed_validation``: workloads whose IR failed validation
    (they have no report row: an unvalidated IR gets no bounds)."""
    validated = {}
    if len(rows):
        for workload, ok in zip(rows["workload"], rows["validated"]):
            validated[workload] = bool(validated.get(workload, True) and bool(ok))
    for workload in failed_validation:
        validated[workload] = False
    return pd.DataFrame({"workload": list(validated), "translated": [True] * len(validated),
                         "validated": list(validated.values())})


def validation_failures(frame: pd.DataFrame) -> list[str]:
    """Failed expectations of the validation suite: every translated workload validated."""
    translated = frame[frame["translated"].astype(bool)] if "translated" in frame else frame
    expectations = [Expectation("ExpectColumnValuesToBeInSet", {"column": "validated", "value_set": [True]},
                                "100 % of the workloads that translated must validate")]
    return _run_suite(VALIDATION_SUITE, translated, expectations, label=translated.get("workload"))


def _row_label(frame: pd.DataFrame):
    if "workload" in frame and "hardware" in frame:
        return frame["workload"].astype(str) + "@" + frame["hardware"].astype(str)
    return None


def warm_up() -> None:
    """Pay the suites' one-time set-up now: import great-expectations (~2.5 s), create the
    process's ephemeral context, and run both suites once on a small table with every column they
    read, so the first real run finds GE's lazy machinery initialised and the report table's
    suite built. Idempotent and thread-safe; the CLI calls it in its preparation
    thread while the workers compute. Without it the first suite run does the same, on the
    critical path."""
    with _LOCK:
        if _STATE.warm:
            return
        _context()
        frame = pd.DataFrame({c: [1.0] for c in {*POSITIVE_COLUMNS, *(c for pair in ORDERED_PAIRS for c in pair[:2])}})
        frame = frame.assign(workload=["warm_up"], hardware=["-"], validated=[True], violation=[False],
                             violation_detail=[""], measured_s=[None], measured_min_s=[None])
        bounds_table_failures(frame)
        validation_failures(validation_frame(frame))
        gc.collect()  # the import's garbage, collected here: else the first real run pays ~0.15 s for it
        _STATE.warm = True


@dataclass
class _GeState:
    """The process's great-expectations context and the (batch definition, suite) pairs built in
    it, by suite name and expectation list (a table's columns decide the list: it rarely changes)."""

    context: Any = None
    suites: dict[tuple, tuple[Any, Any]] = field(default_factory=dict)
    warm: bool = False


_STATE = _GeState()
_LOCK = threading.RLock()  # a GE context is not thread-safe: one suite runs at a time


def _context():
    """The process's ephemeral GE context (created once, progress bars off)."""
    if _STATE.context is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import great_expectations as gx
            from great_expectations.data_context.types.base import ProgressBarsConfig

            from solar_assets.logconf import quiet_library_children

            quiet_library_children()  # its own INFO level set at import: held to the quiet level
            context = gx.get_context(mode="ephemeral")
            context.variables.progress_bars = ProgressBarsConfig(globally=False)
        _STATE.context = context
    return _STATE.context


def _suite(name: str, expectations: list[Expectation]):
    """(whole-DataFrame batch definition, expectation suite) of suite ``name`` with
    ``expectations``: built the first time this list is asked for (the suite written to the
    context once, with all its expectations), then reused."""
    key = (name, repr([(e.kind, sorted(e.kwargs.items())) for e in expectations]))
    if key not in _STATE.suites:
        import great_expectations as gx
        import great_expectations.expectations as gxe

        context = _context()
        unique = f"{name}-{len(_STATE.suites)}"  # names are unique in a context
        batch = (context.data_sources.add_pandas(unique).add_dataframe_asset("table")
                 .add_batch_definition_whole_dataframe("all"))
        suite = context.suites.add(gx.ExpectationSuite(
            name=unique, expectations=[getattr(gxe, e.kind)(**e.kwargs) for e in expectations]))
        _STATE.suites[key] = (batch, suite)
    return _STATE.suites[key]


def _run_suite(name: str, frame: pd.DataFrame, expectations: list[Expectation], label=None) -> list[str]:
    """Run the expectations on the whole frame in the process's GE context (``warm_up``);
    describe each failure with the expectation, its reason, how many rows failed and which (by
    ``label``)."""
    if frame.empty or not expectations:
        return []
    with _LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from great_expectations.validator.v1_validator import Validator

        batch, suite = _suite(name, expectations)
        # the validator ValidationDefinition.run uses, without its run bookkeeping: that stored
        # every result in the context (growing with each call of a long-lived process)
        validator = Validator(batch_definition=batch, batch_parameters={"dataframe": frame.reset_index(drop=True)},
                              result_format="COMPLETE")
        result = validator.validate_expectation_suite(suite)
    reasons = {_key(e.kind, e.kwargs): e for e in expectations}
    failures = []
    for r in result.results:
        if r.success:
            continue
        config = r.expectation_config
        e = reasons.get(_key(config.type, config.kwargs))
        why = e.why if e else config.type
        where = ", ".join(f"{k}={v}" for k, v in config.kwargs.items() if k in ("column", "column_A", "column_B"))
        detail = r.result or {}
        count = detail.get("unexpected_count")
        rows = detail.get("unexpected_index_list") or []
        names = [str(label.iloc[i]) for i in rows[:5]] if label is not None else [str(i) for i in rows[:5]]
        values = detail.get("partial_unexpected_list") or []
        text = f"{config.type} ({where}): {why}"
        if count is not None:
            text += f"; {count} row(s) fail"
        if names:
            text += f": {', '.join(names)}" + (" ..." if len(rows) > 5 else "")
        if values:
            text += f" (values {', '.join(map(_short, values[:5]))})"
        if r.exception_info and r.exception_info.get("raised_exception"):
            text += f"; error: {r.exception_info.get('exception_message')}"
        failures.append(text)
    return failures


def _short(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_short(v) for v in value) + ")"
    if isinstance(value, (bool, str)) or type(value).__name__ == "bool_":
        return str(value)
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return str(value)


def _key(kind: str, kwargs: dict[str, Any]) -> tuple:
    """Match a result's config (snake_case type) with our expectation (CamelCase class)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in kind).lstrip("_")
    cols = tuple(kwargs.get(k) for k in ("column", "column_A", "column_B"))
    return (snake, cols)
