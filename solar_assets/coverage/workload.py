"""One workload's coverage: did it translate, did its IR validate, at what size, how closely.

``check_workload`` runs the chain (``solar_assets.chain``) with its caches and stops after the
verdict (no Dagster, no graph, no bounds), and never raises for a bad workload: what stopped
it is in the row.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solar_assets.chain import stages
from solar_assets.chain.config import RunConfig
from solar_assets.chain.run import ChainState, validate_ir
from solar_assets.errors import SolarError, with_path

if TYPE_CHECKING:
    from ir_schemas import Program
    from solar_assets.sizing import ValidationBudget
    from solar_assets.validate.compare import ValidationResult

log = logging.getLogger(__name__)

# TranslationError messages of the tracers: "no lowering for aten.topk.default (node ...)",
# "cannot lower aten.index.Tensor at node ..." and "no lowering for JAX primitive atan at f.py:9".
_UNLOWERED = re.compile(r"(?:no lowering for|cannot lower) (?:JAX primitive )?(\S+)")


Cell = str | int | float | bool | None
"""One field of a coverage row as JSON holds it (``as_dict``, ``from_dict``)."""


@dataclass(frozen=True)
class CoverageRow:
    """The coverage of one workload file (JSON-able: ``as_dict``)."""

    workload: str
    path: str
    translated: bool
    validated: bool
    validated_size: str | None = None  # "full" or "BATCH=3,..."; None when no size was chosen
    max_abs_error: float | None = None  # the float32 comparison with the framework, as in the report
    max_rel_error: float | None = None
    seconds: float = 0.0
    failed_stage: str | None = None  # pipeline stage that stopped it ("trace", "size", "golden", "validate")
    unlowered_op: str | None = None  # the op the tracer has no lowering for
    error: str | None = None  # the whole message, on one line, naming the file
    framework: str | None = None  # "torch" or "jax"
    # JAX rows: solar's FLOPs and bytes of the full-size IR next to XLA's cost analysis (xla_reference)
    solar_flops: int | None = None
    solar_bytes: int | None = None  # unfused: every kernel's operands and result through DRAM
    solar_bytes_fused: int | None = None  # graph inputs, weights and outputs once
    xla_flops: float | None = None
    xla_bytes: float | None = None
    xla_note: str | None = None  # why the XLA figures are missing

    @property
    def xla_flops_ratio(self) -> float | None:
        """solar FLOPs / XLA flops (JAX rows)."""
        from solar_assets.coverage.xla_reference import ratio

        return ratio(self.solar_flops, self.xla_flops)

    @property
    def xla_bytes_ratio(self) -> float | None:
        """solar unfused bytes / XLA bytes accessed (JAX rows)."""
        from solar_assets.coverage.xla_reference import ratio

        return ratio(self.solar_bytes, self.xla_bytes)

    @property
    def note(self) -> str:
        """What a person reads in the table: the unlowered op, or the error's first clause."""
        if self.unlowered_op:
            return f"unlowered op {self.unlowered_op}"
        if not self.error:
            return ""
        text = self.error
        for prefix in (f"{self.path}: ", f"{Path(self.path).name}: "):
            if text.startswith(prefix):
                text = text[len(prefix):]
        return text

    def as_dict(self) -> dict[str, Cell]:
        """The fields, ``note`` as the table shows it, and the XLA ratios."""
        return {**asdict(self), "note": self.note, "xla_flops_ratio": self.xla_flops_ratio,
                "xla_bytes_ratio": self.xla_bytes_ratio}

    @classmethod
    def from_dict(cls, data: dict[str, Cell]) -> CoverageRow:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


def unlowered_op(message: str) -> str | None:
    """The op named by a tracer's "no lowering for <op>" / "cannot lower <op>" message."""
    match = _UNLOWERED.search(message)
    return match.group(1) if match else None


def _framework_errors(result: ValidationResult | None) -> tuple[float | None, float | None]:
    """Largest abs / rel error of the float32 comparison with the framework's outputs (the report's
    figure; the float64 strong check is far tighter)."""
    if result is None or not result.checks:
        return None, None
    checks = [c for c in result.checks if c.reference == "outputs"] or list(result.checks)
    return max(float(c.max_abs_error) for c in checks), max(float(c.max_rel_error) for c in checks)


def check_workload(path: str | Path, cache_dir: str | Path | None = None, budget: ValidationBudget | None = None,
                   config: RunConfig | None = None) -> CoverageRow:
    """Translate the workload at its own size, then the chain up to the verdict
    (``chain.run.validate_ir``: validation size, golden run, re-trace, validation, or node-wise);
    a failure at any stage is recorded, never raised. ``budget`` (None: ``config``'s, else the
    default) bounds the validation's cost; ``config`` None: ``RunConfig.from_env()``."""
    path = Path(path)
    config = (config or RunConfig.from_env()).with_options(validation_budget=budget)
    cache = Path(cache_dir) if cache_dir is not None else None
    start = time.perf_counter()
    state, translated, result = ChainState(), False, None
    try:
        src = stages.read_source(path, config, cache)
        translation = stages.translate(src, config, cache)
        translated = True
        result = validate_ir(src, translation, config, cache, state).result
    except SolarError as e:
        message = with_path(str(e), path)
        abs_err, rel_err = _framework_errors(getattr(e, "result", None))
        return CoverageRow(path.stem, str(path), translated, False, state.validated_size, abs_err, rel_err,
                           time.perf_counter() - start, state.stage, None if translated else unlowered_op(message),
                           message)
    except Exception as e:  # a stage bug: record it with where it happened, keep going
        log.debug("%s: %s failed", path, state.stage, exc_info=True)
        message = with_path(f"{state.stage} failed unexpectedly: {type(e).__name__}: {e}", path)
        return CoverageRow(path.stem, str(path), translated, False, state.validated_size, None, None,
                           time.perf_counter() - start, state.stage, None, message)
    abs_err, rel_err = _framework_errors(result)
    extra = _xla_comparison(path, translation.program) if src.framework == "jax" else {}
    return CoverageRow(path.stem, str(path), True, True, state.validated_size, abs_err, rel_err,
                       time.perf_counter() - start, framework=src.framework, **extra)


def _xla_comparison(path: Path, program: Program) -> dict[str, Any]:
    """solar's FLOPs / bytes of the full-size IR and XLA's cost analysis of the compiled function."""
    from solar_assets.coverage.xla_reference import xla_cost
    from solar_assets.graph import build_einsum_graph

    graph = build_einsum_graph(program)
    out: dict[str, Any] = {"solar_flops": int(graph.flops), "solar_bytes": int(graph.bytes_unfused),
                           "solar_bytes_fused": int(graph.io_bytes)}
    try:
        cost = xla_cost(path)
    except Exception as e:  # noqa: BLE001 - a reference figure: its absence must not fail the row
        log.debug("%s: XLA cost analysis failed", path, exc_info=True)
        return {**out, "xla_note": f"XLA cost analysis failed: {type(e).__name__}: {e}"}
    return {**out, "xla_flops": cost.flops, "xla_bytes": cost.bytes_accessed}


def unfinished_row(path: str | Path, message: str, seconds: float, last_event: str | None) -> CoverageRow:
    """A row for a workload whose check did not finish (a timeout, a worker that died).
    ``last_event`` is the last stage it started (``pipeline`` progress: "trace", "size",
    "trace at BATCH=3", "golden", ...): anything after the full-size trace means it translated."""
    path = Path(path)
    translated = last_event is not None and last_event != "trace"
    stage = None if last_event is None else last_event.split(" ", 1)[0]
    if stage == "trace" and translated:
        stage = "size"  # tracing at a candidate validation size
    where = f" during {last_event}" if last_event else ""
    return CoverageRow(path.stem, str(path), translated, False, None, None, None, seconds, stage, None,
                       with_path(message + where, path))
