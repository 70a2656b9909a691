"""The assets: nouns for what is stored, each a thin call into a stage function of ``solar_assets.chain``.

Every asset returns ``dg.Output`` with a content-hash data version (so staleness follows the
data, not the clock), a ``code_version`` (the stage's ``CODE_VERSION``, or the hash of its
sources where it declares none), and metadata a person reads in the UI. A user-facing stage error becomes a ``dg.Failure`` whose
description is the one-line message naming the file; the validation failure also carries the
per-output error table.
"""
# no `from __future__ import annotations`: Dagster reads the annotations at runtime

import contextlib
import dataclasses
import hashlib
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg
import numpy as np

from ir_schemas import ReportRow
from solar_assets import pipeline
from solar_assets.dagster_defs import metadata as md
from solar_assets.dagster_defs.automation import REANALYSE, REPORT
from solar_assets.dagster_defs.partitions import (
    BACKEND_KEYS,
    hardware_partitions,
    workload_on_backend,
    workload_on_hardware,
    workload_partitions,
)
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.sources import hardware_file, workload_file
from solar_assets.chain import run as chain
from solar_assets.chain import stages as chain_stages
from solar_assets.errors import SolarError
from solar_assets.bounds import Bound, InverseRoofline, SolBounds
from solar_assets.bounds.cache_aware import CacheAwareOutcome
from solar_assets.dagster_defs.artifact_types import ByPartition, T, by_partition_type
from solar_assets.golden import Golden
from solar_assets.graph import EinsumGraph
from solar_assets.hardware import HardwareSpec
from solar_assets.pipeline import BoundsRow, ValidatedIR
from solar_assets.translate import Translation
from solar_assets.validate import ValidationResult
from solar_assets.workloads import WorkloadSource

if TYPE_CHECKING:  # imported where used: loading the definitions stays light
    from solar_assets.measure.workload import WorkloadMeasurement
    from solar_assets.report.per_op import PerOpRow

IR_TEXT_MAX_LINES = md.CODE_MAX_LINES
PNG_EMBED_MAX_BYTES = md.PNG_EMBED_MAX_BYTES  # larger pictures are linked by path, not embedded in the event log


def _code_version(*packages: str) -> str:
    """The stage's own ``CODE_VERSION`` where it declares one (bumped by its authors when an
    algorithm changes), else the hash of its sources; one part per package. Read from the
    sources, not by importing the package: importing them all (torch among them) made loading
    the definitions cost ~10 s of every ``solar analyze`` call."""
    parts = []
    for package in packages:
        declared = _declared_code_version(package)
        parts.append(f"v{declared}" if declared is not None else pipeline.package_fingerprint(package))
    return "+".join(parts)


def _declared_code_version(module: str, depth: int = 0) -> str | None:
    """``CODE_VERSION`` of ``module`` as its source assigns it (a literal), following
    ``from X import CODE_VERSION`` re-exports; None when it declares none."""
    import ast

    base = Path(__file__).resolve().parents[2] / Path(*module.split("."))
    source = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if depth > 8 or not source.is_file():
        return None
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CODE_VERSION"
                                                for t in node.targets) and isinstance(node.value, ast.Constant):
            return str(node.value.value)
        if isinstance(node, ast.ImportFrom) and any(a.name == "CODE_VERSION" and a.asname is None for a in node.names):
            package = module if base.is_dir() else module.rsplit(".", 1)[0]
            for _ in range(max(node.level - 1, 0)):
                package = package.rsplit(".", 1)[0]
            target = f"{package}.{node.module}" if node.level else node.module
            return _declared_code_version(target or package, depth + 1)
    return None


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _user_errors() -> Iterator[None]:
    """A SolarError fails the step with its message on one line (it already names the file);
    a failed validation also carries its per-output table."""
    try:
        yield
    except pipeline.ValidationFailed as e:
        raise dg.Failure(description=pipeline.one_line(str(e)), metadata=_validation_metadata(e.result),
                         allow_retries=False) from e
    except SolarError as e:
        raise dg.Failure(description=pipeline.one_line(str(e)), allow_retries=False) from e


_code_md = md.code  # the IR and the source as fenced blocks (solar_assets.dagster_defs.metadata)
_png_md = md.picture  # a PNG inline as a data: URI


def _unchanged(picture: Path, digest: str) -> bool:
    """Whether ``picture`` was drawn from data with this ``digest`` (its ``.digest`` sidecar):
    then it is not drawn again. Drawing the graph, roofline and ski-slope PNGs was about 3 s of a
    warm workload's 11 on the Dagster path (bench/dagster_overhead.py)."""
    sidecar = picture.with_name(picture.name + ".digest")
    return picture.is_file() and sidecar.is_file() and sidecar.read_text() == digest


def _drawn(picture: Path, digest: str) -> None:
    picture.with_name(picture.name + ".digest").write_text(digest)


# ---------------------------------------------------------------------------- per workload
@dg.asset(automation_condition=REANALYSE, partitions_def=workload_partitions, deps=[workload_file],
          code_version=_code_version("solar_assets.workloads"),
          group_name="workload", kinds={"python"})
def workload_source(context: dg.AssetExecutionContext, solar: SolarConfig) -> dg.Output:
    """The workload file (KernelBench convention), its content hash and framework."""
    path = solar.workload_path(context.partition_key)
    with _user_errors():
        src = chain_stages.read_source(path, solar.run_config)
    return dg.Output(src, data_version=dg.DataVersion(src.version), metadata={
        "file": dg.MetadataValue.path(src.path),
        "sha256": src.sha256,
        "framework": src.framework,
        "source": _code_md(Path(src.path).read_text(encoding="utf-8", errors="replace"), "python"),
    })


@dg.asset(automation_condition=REANALYSE, partitions_def=workload_partitions,
          code_version=_code_version("solar_assets.golden"),
          group_name="workload", kinds={"pytorch", "numpy"})
def golden_outputs(workload_source: WorkloadSource, solar: SolarConfig) -> dg.Output:
    """The workload run by PyTorch on seeded inputs (float32 as written, and float64), at its
    validation size (full, or its size constants scaled down: see ``solar_assets.sizing``).
    None where no size fits: ``ir_validation`` then validates node-wise at the file's own size."""
    with _user_errors():
        translation = chain_stages.translate(workload_source, solar.run_config, solar.cache_dir)
        choice = chain_stages.choose_size_or_nodewise(workload_source, translation, solar.run_config, solar.cache_dir)
        golden = chain.golden_at(workload_source, choice, solar.cache_dir)
    if golden is None:
        why = str(choice.error).splitlines()[0] if choice.error is not None else "no validation size fits"
        return dg.Output(None, data_version=dg.DataVersion(_digest("node-wise", why)), metadata={
            "validation size": "node-wise (no golden run at one size)", "note": why})
    arrays = [*golden.inputs, *golden.outputs, *(golden.outputs64 or [])]
    version = _digest(*(np.ascontiguousarray(a).tobytes() for a in arrays))
    shapes = lambda xs: ", ".join(f"{a.dtype}{list(a.shape)}" for a in xs)  # noqa: E731
    return dg.Output(golden, data_version=dg.DataVersion(version), metadata={
        "inputs": shapes(golden.inputs),
        "outputs": shapes(golden.outputs),
        "parameters": len(golden.params),
        "validation size": golden.size_label,
        "seconds": md.seconds(golden.seconds),
    })


@dg.asset(automation_condition=REANALYSE, partitions_def=workload_partitions,
          code_version=_code_version("solar_assets.translate", "solar_assets.agent"),
          group_name="workload", kinds={"pytorch"})
def ir_translation(workload_source: WorkloadSource, solar: SolarConfig) -> dg.Output:
    """Affine Loop IR of the workload, with its provenance (translator, model, attempts)."""
    with _user_errors():
        translation = chain_stages.translate(workload_source, solar.run_config, solar.cache_dir)
    program = translation.program
    kernels = sum(1 for s in program.steps if s.kind == "kernel")
    return dg.Output(translation, data_version=dg.DataVersion(_digest(program.model_dump_json())), metadata={
        "translator": translation.translator,
        "model": translation.model or "",
        "attempts": translation.attempts,
        "seconds": md.seconds(translation.seconds),
        "kernels": kernels,
        "steps": len(program.steps),
        "tensors": len(program.tensors),
        "diagnostics": dg.MetadataValue.text("\n".join(translation.diagnostics) or "none"),
        **_agent_metadata(translation),
        "IR": _code_md(str(program)),
    })


def _agent_metadata(translation: Translation) -> dict[str, Any]:
    """The agent's provenance: prompt hash, tokens, the nodes it lowered, one row per attempt."""
    if not getattr(translation, "attempt_log", ()):
        return {}
    input_tokens, output_tokens = translation.tokens()
    rows = [f"| {a.task} | {a.attempt} | {'accepted' if a.accepted else 'rejected'} | {a.input_tokens or '-'} "
            f"| {a.output_tokens or '-'} | {'<br>'.join(d.replace('|', '/').replace(chr(10), ' ') for d in a.diagnostics)} |"
            for a in translation.attempt_log]
    return {
        "prompt sha256": translation.prompt_sha256 or "",
        "input tokens": input_tokens if input_tokens is not None else "not reported",
        "output tokens": output_tokens if output_tokens is not None else "not reported",
        "agent nodes": ", ".join(translation.agent_nodes) or "whole workload",
        "from cache": bool(translation.from_cache),
        "attempt log": dg.MetadataValue.md("\n".join(["| task | attempt | verdict | input tokens | output tokens "
                                                      "| diagnostics |", "|---|---:|---|---:|---:|---|", *rows])),
    }


def _validation_metadata(result: ValidationResult | None) -> dict[str, Any]:
    if result is None:
        return {}
    columns = [dg.TableColumn(name, kind) for name, kind in (
        ("output", "string"), ("ok", "bool"), ("shape", "string"), ("golden_shape", "string"),
        ("dtype", "string"), ("max_abs_error", "float"), ("max_rel_error", "float"),
        ("tolerance_abs", "float"), ("message", "string"))]
    records = [dg.TableRecord({
        "output": c.name, "ok": bool(c.ok), "shape": str(c.shape), "golden_shape": str(c.golden_shape),
        "dtype": str(c.dtype), "max_abs_error": md.rounded(float(c.max_abs_error), 2),
        "max_rel_error": md.rounded(float(c.max_rel_error), 2), "tolerance_abs": md.rounded(float(c.tolerance_abs), 2),
        "message": c.message or ""}) for c in result.checks]
    return {
        "verdict": "pass" if result.ok else "FAIL",
        "max_abs_error": md.error(result.max_abs_error),
        "max_rel_error": md.error(result.max_rel_error),
        "checks": dg.MetadataValue.table(records, schema=dg.TableSchema(columns)),
    }


@dg.asset(automation_condition=REANALYSE, partitions_def=workload_partitions,
          code_version=_code_version("solar_assets.validate", "solar_assets.execute"),
          group_name="workload", kinds={"numba"})
def ir_validation(workload_source: WorkloadSource, ir_translation: Translation, golden_outputs: Golden | None,
                  solar: SolarConfig) -> dg.Output:
    """The IR run on the golden inputs and compared per output; a failure stops everything downstream.
    At a scaled-down validation size, the IR traced at that size runs (same structure, checked);
    where no size fits (``golden_outputs`` None), the IR is validated node-wise at full size."""
    with _user_errors():
        choice = chain_stages.choose_size_or_nodewise(workload_source, ir_translation, solar.run_config,
                                                      solar.cache_dir)  # cached by golden_outputs
        validated = chain.validate_at(workload_source, ir_translation, choice, golden_outputs, solar.run_config,
                                      solar.cache_dir)
    result = validated.result
    version = _digest(ir_translation.program.model_dump_json(), "pass")
    return dg.Output(validated, data_version=dg.DataVersion(version),
                     metadata={**_validation_metadata(result), "seconds": md.seconds(result.seconds),
                               "validation size": validated.validated_size})


@dg.asset(automation_condition=REANALYSE, partitions_def=workload_partitions,
          code_version=_code_version("solar_assets.graph"),
          group_name="workload", kinds={"networkx"})
def einsum_graph(workload_source: WorkloadSource, ir_validation: ValidatedIR, solar: SolarConfig) -> dg.Output:
    """Extended einsums with exact MACs, FLOPs and bytes per node."""
    with _user_errors():
        graph = chain_stages.lift_graph(workload_source, ir_validation)
    metadata: dict[str, Any] = {
        "MACs": int(graph.macs),  # exact counts as numbers: Dagster plots them
        "FLOPs": int(graph.flops),
        "MACs / FLOPs": dg.MetadataValue.text(f"{md.count(graph.macs).text} / {md.count(graph.flops).text}"),
        "bytes unfused": md.data_size(int(graph.bytes_unfused)),
        "bytes fused (graph I/O)": md.data_size(int(graph.io_bytes)),
        "dtype": str(graph.dtype),
        "einsums": sum(1 for n in graph.nodes if n.kind != "reshape"),
    }
    picture = Path(solar.home) / "graphs" / f"{workload_source.name}.png"
    try:
        picture.parent.mkdir(parents=True, exist_ok=True)
        drawn_from = _digest(str(graph.digest()), _code_version("solar_assets.graph"))
        if not _unchanged(picture, drawn_from):
            graph.draw_png(picture)
            _drawn(picture, drawn_from)
        metadata["graph"] = _png_md(picture, f"einsum graph of {workload_source.name}")
    except Exception as e:  # a picture is a nicety: record why it is missing, keep the graph
        metadata["graph"] = dg.MetadataValue.text(f"no picture: {type(e).__name__}: {e}")
    return dg.Output(graph, data_version=dg.DataVersion(str(graph.digest())), metadata=metadata)


# ---------------------------------------------------------------------------- per hardware
@dg.asset(automation_condition=REANALYSE, partitions_def=hardware_partitions, deps=[hardware_file],
          code_version=_code_version("solar_assets.hardware"),
          group_name="hardware", kinds={"yaml"})
def hardware_spec(context: dg.AssetExecutionContext, solar: SolarConfig) -> dg.Output:
    """One accelerator's validated spec; its data version is the hash of its figures, so editing a
    figure makes exactly that hardware's bounds stale."""
    with _user_errors():
        spec = pipeline.load_spec(context.partition_key, solar.hardware_dir)
    return dg.Output(spec, data_version=dg.DataVersion(spec.digest()), metadata={
        "vendor": spec.vendor,
        "peak FLOP/s": md.peaks(spec.peak_flop_per_s.items()),
        "DRAM bytes/s": md.byte_rate(float(spec.dram_bytes_per_s)),
        "on-chip buffer bytes": md.data_size(int(spec.onchip_buffer_bytes)),
        "sources": dg.MetadataValue.md("\n".join(f"- {s}" for s in spec.sources)),
    })


# ---------------------------------------------------------------------------- per workload × hardware
def _bound_md(bound: Bound) -> str:
    from solar_assets.report import format_bytes, format_count, format_seconds

    proven = "" if getattr(bound, "proven_optimal", True) else " (not proven optimal)"
    return (f"| {bound.mode} | {format_seconds(bound.time_s)} | {bound.limiter} | {format_count(bound.flops)} "
            f"| {format_bytes(bound.bytes)} | {bound.intensity_flop_per_byte:.3g}{proven} |")


@dg.asset(automation_condition=REANALYSE, partitions_def=workload_on_hardware,
          code_version=_code_version("solar_assets.bounds", "solar_assets.report"),
          group_name="bounds", kinds={"pyomo"})
def sol_bounds(workload_source: WorkloadSource, ir_validation: ValidatedIR, einsum_graph: EinsumGraph,
               hardware_spec: HardwareSpec, cache_aware_bound: CacheAwareOutcome, solar: SolarConfig) -> dg.Output:
    """Unfused, fused and cache-aware SOL bounds of the workload on the hardware, each naming its
    limiter, with this pair's roofline plot."""
    from solar_assets.report import assemble_row, plot_roofline

    with _user_errors():
        bounds = chain_stages.bound_graph(workload_source, einsum_graph, hardware_spec, solar.run_config)
        row = assemble_row(workload_source, ir_validation, einsum_graph, bounds, hardware_spec,
                           cache_aware=cache_aware_bound)
    table = "\n".join(["| mode | time | limiter | FLOPs | DRAM bytes | FLOP/byte |", "|---|---:|---|---:|---:|---:|",
                       *(_bound_md(b) for b in (bounds.unfused, bounds.unfused_graph, bounds.fused)),
                       _cache_aware_md(row)])
    roofline = Path(solar.reports_dir) / "roofline" / f"{row.workload}@{row.hardware}.png"
    per_op = _per_op(row.workload, einsum_graph, bounds, row.hardware)
    try:
        row_digest = _digest(row.model_dump_json(), _code_version("solar_assets.report"))
        if not _unchanged(roofline, row_digest):
            plot_roofline([row], roofline, per_op=per_op if isinstance(per_op, list) else ())
            _drawn(roofline, row_digest)
        plot = _png_md(roofline, f"roofline of {row.workload} on {row.hardware}")
    except Exception as e:  # a picture is a nicety: record why it is missing, keep the bounds
        plot = dg.MetadataValue.text(f"no picture: {type(e).__name__}: {e}")
    return dg.Output(BoundsRow(bounds=bounds, row=row), data_version=dg.DataVersion(_digest(row.model_dump_json())),
                     metadata={
                         "SOL unfused": md.sol(row.sol_unfused_s, row.bound_unfused),
                         "SOL fused": md.sol(row.sol_fused_s, row.bound_fused),
                         "SOL cache-aware lower bound": md.sol(row.sol_cache_aware_lb_s, row.bound_cache_aware_lb),
                         "cache-aware, best modelled schedule": md.sol(row.sol_cache_aware_s, row.bound_cache_aware),
                         **md.plotted_times({"SOL unfused": row.sol_unfused_s, "SOL fused": row.sol_fused_s,
                                             "SOL cache-aware lower bound": row.sol_cache_aware_lb_s}),
                         "bound_unfused": row.bound_unfused,
                         "bound_fused": row.bound_fused,
                         "dtype": row.dtype,
                         "peak FLOP/s": md.flop_rate(row.peak_flop_per_s),
                         "DRAM bytes/s": md.byte_rate(row.dram_bytes_per_s),
                         "bound_cache_aware": row.bound_cache_aware or "none",
                         "cache-aware note": row.cache_aware_note or "none",
                         "bounds": dg.MetadataValue.md(table),
                         **_per_op_metadata(per_op),
                         "roofline": plot,
                     })


def _per_op(workload: str, graph: EinsumGraph, bounds: SolBounds, hardware: str) -> "list[PerOpRow] | str":
    """The per-op rows (``report.per_op``), or why there are none: a graph whose breakdown cannot
    be made keeps its bounds (the breakdown is a view of them)."""
    from solar_assets.report.per_op import per_op_rows

    try:
        return per_op_rows(workload, graph, bounds, hardware)
    except Exception as e:  # record why it is missing, keep the bounds
        return f"no per-op breakdown: {type(e).__name__}: {e}"


def _per_op_metadata(rows: "list[PerOpRow] | str") -> dict[str, Any]:
    """The per-op breakdown on the bounds asset: a table in the UI (its largest shares) and the count."""
    if isinstance(rows, str):
        return {"per-op": dg.MetadataValue.text(rows)}
    shown = min(len(rows), md.PER_OP_UI_MAX_ROWS)
    return {"per-op": md.per_op_table(rows),
            "ops": dg.MetadataValue.text(f"{len(rows)} framework ops" + (
                f", the {shown} largest shares shown (every op: solar analyze --per-op all)" if shown < len(rows)
                else ""))}


def _cache_aware_md(row: ReportRow) -> str:
    """The cache-aware line of the bounds table (from the row: the outcome carries bytes, not time)."""
    from solar_assets.report import format_bytes, format_count, format_seconds

    if row.sol_cache_aware_s is None or row.bytes_cache_aware is None:
        return f"| cache_aware | — | — | — | — | {row.cache_aware_note or 'no bound'} |"
    intensity = row.flops / row.bytes_cache_aware if row.bytes_cache_aware else float("inf")
    proven = "" if row.cache_aware_proven_optimal else " (not proven optimal)"
    return (f"| cache_aware | {format_seconds(row.sol_cache_aware_s)} | {row.bound_cache_aware} "
            f"| {format_count(row.flops)} | {format_bytes(row.bytes_cache_aware)} | {intensity:.3g}{proven} |")


@dg.asset(automation_condition=REANALYSE, partitions_def=workload_on_hardware,
          code_version=_code_version("solar_assets.bounds.cache_aware", "solar_assets.graph"),
          group_name="bounds", kinds={"pyomo", "glpk"})
def cache_aware_bound(workload_source: WorkloadSource, einsum_graph: EinsumGraph, hardware_spec: HardwareSpec,
                      solar: SolarConfig) -> dg.Output:
    """Minimum DRAM traffic over tilings and fused segments with the hardware's on-chip buffer
    (Pyomo + GLPK ILP). A solver failure is recorded, not raised: the other modes stand."""
    outcome = pipeline.cache_aware_for(workload_source, einsum_graph, hardware_spec, solar.cache_dir)
    metadata: dict[str, Any] = {
        "buffer bytes": md.data_size(int(outcome.capacity_bytes)),
        "bytes cache-aware (provable lower bound)": md.data_size(int(outcome.lb_bytes))
        if getattr(outcome, "lb_bytes", None) is not None else dg.MetadataValue.text("none"),
        "best modelled schedule (achievable)": md.data_size(int(outcome.bytes)) if outcome.ok else
        dg.MetadataValue.text("none"),
        "bytes unfused-tiled": md.data_size(int(outcome.unfused_tiled_bytes))
        if outcome.unfused_tiled_bytes is not None else dg.MetadataValue.text("some einsum does not fit alone"),
        "bytes fused (graph I/O)": md.data_size(int(outcome.fused_bytes or 0)),
        "proven optimal": bool(outcome.proven_optimal),
        "segments / einsums": f"{outcome.segments} / {outcome.einsums}",
        "solve seconds": md.seconds(outcome.solve_seconds),
        "note": outcome.note() or "none",
    }
    return dg.Output(outcome, data_version=dg.DataVersion(_digest(outcome.to_json())), metadata=metadata)


@dg.asset(automation_condition=REANALYSE, partitions_def=workload_partitions,
          code_version=_code_version("solar_assets.bounds.cache_aware", "solar_assets.graph"),
          group_name="bounds", kinds={"pyomo", "matplotlib"})
def ski_slope(workload_source: WorkloadSource, einsum_graph: EinsumGraph, solar: SolarConfig) -> dg.Output:
    """Minimum DRAM traffic against on-chip buffer capacity (64 KiB to 1 GiB, log-spaced) as CSV and
    PNG under ``$SOLAR_HOME/reports/skislope``, with the shipped hardware's buffers marked."""
    from solar_assets.hardware import list_hardware

    marks = {}
    for name in list_hardware(solar.hardware_dir):
        with contextlib.suppress(SolarError):  # a broken spec fails its own asset, not this picture
            marks[name] = _buffer_bytes(name, solar.hardware_dir)
    out_dir = Path(solar.reports_dir) / "skislope"
    drawn = {"csv": out_dir / f"{workload_source.name}.csv", "png": out_dir / f"{workload_source.name}.png"}
    inputs = _digest(str(einsum_graph.digest()), json.dumps(marks, sort_keys=True), _code_version("solar_assets.bounds.cache_aware"))
    try:
        if _unchanged(drawn["png"], inputs) and drawn["csv"].is_file():
            paths = drawn
        else:
            paths = pipeline.ski_slope_for(workload_source, einsum_graph, out_dir, marks, solar.cache_dir)
            _drawn(paths["png"], inputs)
    except SolarError as e:  # e.g. glpsol missing: the bounds do not depend on this picture
        note = pipeline.one_line(str(e))
        return dg.Output({}, data_version=dg.DataVersion(_digest(note)), metadata={"note": note})
    return dg.Output({k: str(v) for k, v in paths.items()},
                     data_version=dg.DataVersion(_digest(paths["csv"].read_bytes())), metadata={
                         "csv": dg.MetadataValue.path(str(paths["csv"])),
                         "ski-slope": _png_md(paths["png"], f"ski-slope of {workload_source.name}"),
                     })


_BUFFERS: dict[tuple[str, int, int], int] = {}


def _buffer_bytes(name: str, hardware_dir: str) -> int:
    """A spec's on-chip buffer, parsed once per process and file version (path, mtime, size):
    ``ski_slope`` marks every spec, and parsing the six YAMLs was 0.3 s of each workload."""
    path = Path(hardware_dir) / f"{name}.yaml"
    stat = path.stat() if path.is_file() else None
    key = (str(path), stat.st_mtime_ns if stat else 0, stat.st_size if stat else 0)
    if key not in _BUFFERS:
        _BUFFERS[key] = int(pipeline.load_spec(name, hardware_dir).onchip_buffer_bytes)
    return _BUFFERS[key]


@dg.asset(automation_condition=REANALYSE, partitions_def=workload_on_hardware,
          code_version=_code_version("solar_assets.bounds"), group_name="bounds", kinds={"python"})
def inverse_roofline(workload_source: WorkloadSource, einsum_graph: EinsumGraph, hardware_spec: HardwareSpec,
                     solar: SolarConfig) -> dg.Output:
    """The peak FLOP/s and DRAM bandwidth needed to meet ``SolarConfig.target_latency_s``
    (None, with a note, when no target is configured)."""
    target = solar.target_latency_s
    with _user_errors():
        bounds = None if target is None else \
            chain_stages.bound_graph(workload_source, einsum_graph, hardware_spec, solar.run_config)
        inverse = None if bounds is None else chain_stages.inverse_for(workload_source, hardware_spec, target, bounds)
    if inverse is None:
        return dg.Output(None, data_version=dg.DataVersion("no-target"),
                         metadata={"note": "no target latency: set SolarConfig.target_latency_s"})
    metadata: dict[str, Any] = {"target latency": md.seconds(float(target))}
    for mode in ("fused", "unfused_graph"):
        part = getattr(inverse, mode)
        metadata[f"min FLOP/s ({mode})"] = md.flop_rate(float(part.min_flop_per_s))
        metadata[f"min DRAM bytes/s ({mode})"] = md.byte_rate(float(part.min_bytes_per_s))
        metadata[f"FLOP/s needed ({mode})"] = md.factor(float(part.compute_factor), "the peak")
        metadata[f"bandwidth needed ({mode})"] = md.factor(float(part.bandwidth_factor), "the bandwidth")
    return dg.Output(inverse, data_version=dg.DataVersion(_digest(repr(inverse))), metadata=metadata)


# ---------------------------------------------------------------------------- per workload × backend (this host)
HOST_SPEC = "host"  # the hardware partition a measurement is compared with: the machine it ran on


@dataclasses.dataclass
class MeasuredRuntime:
    """One backend's measurement of one workload, and the digest of the host spec it ran against."""

    measurement: "WorkloadMeasurement"  # one backend
    host_digest: str


class MeasureConfig(dg.Config):
    """The timing loop of ``measured_runtime`` (``solar analyze --runs``)."""

    runs: int = 20
    min_runs: int = 5


with warnings.catch_warnings():  # beta in Dagster 1.13, and the one mapping that says this
    warnings.simplefilter("ignore", dg.BetaWarning)
    _WORKLOAD_OF_MEASUREMENT = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="workload")


@dg.asset(partitions_def=workload_on_backend,
          ins={"workload_source": dg.AssetIn(partition_mapping=_WORKLOAD_OF_MEASUREMENT),
               "hardware_spec": dg.AssetIn(partition_mapping=dg.SpecificPartitionsPartitionMapping([HOST_SPEC]),
                                           dagster_type=by_partition_type(HardwareSpec))},
          code_version=_code_version("solar_assets.measure"), group_name="measure", kinds={"pytorch", "jax"})
def measured_runtime(context: dg.AssetExecutionContext, config: MeasureConfig, workload_source: WorkloadSource,
                     hardware_spec: ByPartition[HardwareSpec], solar: SolarConfig) -> dg.Output:
    """The workload run on this host by one backend (caches flushed before each run): every timed
    run, the first call, the host spec it ran against. Headroom and the violation audit are
    computed from it in ``headroom_report`` and judged by its ``no_sol_violation`` check.
    Never cached: each materialisation is a new measurement, so its data version is the times."""
    from solar_assets.measure import MeasureOptions, TimingOptions, measure_workload

    keys = context.partition_key.keys_by_dimension
    framework, backend = BACKEND_KEYS[keys["backend"]]
    host = hardware_spec if not isinstance(hardware_spec, dict) else next(iter(hardware_spec.values()))
    if workload_source.framework != framework:
        raise dg.Failure(description=f"{workload_source.path}: a {workload_source.framework} workload has no "
                                     f"{keys['backend']} measurement", allow_retries=False)
    runs = max(config.runs, 1)
    options = MeasureOptions(backends=(backend,), timing=TimingOptions(runs=runs, min_runs=min(config.min_runs, runs)))
    measurement = measure_workload(workload_source.path, options)
    timing = measurement.timings.get(backend)
    if timing is None or not timing.ok:
        raise dg.Failure(description=pipeline.one_line(
            (timing.error if timing is not None else None) or f"{workload_source.path}: {backend}: no runs"),
            allow_retries=False)
    version = _digest(json.dumps(list(timing.times_s)), host.digest())
    return dg.Output(MeasuredRuntime(measurement, host.digest()), data_version=dg.DataVersion(version), metadata={
        "backend": timing.label,
        "median": md.seconds(timing.median_s),
        "fastest": md.seconds(timing.min_s),
        **md.plotted_times({"median": timing.median_s, "fastest": timing.min_s}),
        "runs": len(timing.times_s),
        "first call": md.seconds(timing.first_call_s),
        "threads": timing.extra.get("threads", ""),
        "host spec digest": host.digest(),
        "notes": "; ".join(measurement.notes) or "none",
    })


# ---------------------------------------------------------------------------- across everything
class HeadroomConfig(dg.Config):
    """Which rows the report shows; None (the default): every materialised workload × hardware."""

    workloads: list[str] | None = None
    hardware: list[str] | None = None
    failures: list[str] = []
    """One-line errors of workloads that failed, listed in the report (the CLI passes them)."""
    record_file: str | None = None
    """``solar analyze``: the partition events its workers computed, recorded in this run first
    (``solar_assets.dagster_defs.batch``: one run per call)."""


@dg.asset(
    ins={
        "sol_bounds": dg.AssetIn(metadata={"allow_missing_partitions": True},
                                 dagster_type=by_partition_type(BoundsRow)),
        "inverse_roofline": dg.AssetIn(metadata={"allow_missing_partitions": True},
                                       dagster_type=by_partition_type(InverseRoofline, optional=True)),
        "cache_aware_bound": dg.AssetIn(metadata={"allow_missing_partitions": True},
                                        dagster_type=by_partition_type(CacheAwareOutcome)),
        "measured_runtime": dg.AssetIn(metadata={"allow_missing_partitions": True},
                                       dagster_type=by_partition_type(MeasuredRuntime)),
    },
    code_version=_code_version("solar_assets.report", "solar_assets.measure"), group_name="report",
    kinds={"pandas"}, automation_condition=REPORT,
)
def headroom_report(context: dg.AssetExecutionContext, config: HeadroomConfig, sol_bounds: ByPartition[BoundsRow],
                    inverse_roofline: ByPartition[InverseRoofline | None],
                    cache_aware_bound: ByPartition[CacheAwareOutcome], measured_runtime: ByPartition[MeasuredRuntime],
                    solar: SolarConfig) -> dg.Output:
    """One table across workloads and hardware: the latest row of every materialised
    ``sol_bounds`` partition (``config`` may narrow it), with the inverse roofline, the cache-aware
    bracket and, on ``host``, the measured runtimes with headroom and the violation audit. Written
    as CSV / JSON / Markdown / roofline PNG under ``$SOLAR_HOME/reports``, with
    ``report_provenance.json``: the run and data version each row came from."""
    from solar_assets.report import complete_row, format_table, write_report

    if config.record_file:
        from solar_assets.dagster_defs.batch import record_call

        record_call(context, config.record_file)
    # Dagster's filesystem IO manager hands over a dict by partition key, but the bare value when
    # exactly one workload × hardware partition exists, and None when none does.
    sol_bounds, inverse_roofline, cache_aware_bound, measured_runtime = (
        _by_partition(v) for v in (sol_bounds, inverse_roofline, cache_aware_bound, measured_runtime))
    order_w = {w: i for i, w in enumerate(config.workloads or [])}
    order_h = {h: i for i, h in enumerate(config.hardware or [])}
    measured = _measurements_by_workload(measured_runtime)
    rows: list[ReportRow] = []
    keyed: dict[int, tuple[str, str]] = {}
    for key, bounds_row in sol_bounds.items():
        row = bounds_row.row
        workload = _workload_of(key, row, config.workloads)
        if (config.workloads is not None and workload not in order_w) or \
                (config.hardware is not None and row.hardware not in order_h):
            continue
        inverse = inverse_roofline.get(key)
        if inverse is None or solar.target_latency_s is None or \
                float(inverse.target_latency_s) != float(solar.target_latency_s):
            inverse = None  # none, or one of an older target
        outcome = cache_aware_bound.get(key)
        if outcome is not None and outcome.capacity_bytes != row.onchip_buffer_bytes:
            outcome = None  # one of an old spec
        row = complete_row(row, inverse=inverse, target_latency_s=solar.target_latency_s, cache_aware=outcome)
        if row.hardware == HOST_SPEC and workload in measured:
            row = _with_measurement(row, measured[workload])
        rows.append(row)
        keyed[id(row)] = (workload, key)
    rows.sort(key=lambda r: (order_w.get(keyed[id(r)][0], len(order_w)), keyed[id(r)][0],
                             order_h.get(r.hardware, len(order_h)), r.hardware))
    provenance = _provenance(context.instance, [keyed[id(r)][1] for r in rows], rows)
    paths = write_report(rows, solar.reports_dir, errors=config.failures)
    provenance_file = Path(solar.reports_dir) / "report_provenance.json"
    provenance_file.write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    failed_validation = sorted({Path(f.split(": ", 1)[0]).stem for f in config.failures if "failed validation" in f})
    payload = json.dumps([r.model_dump(mode="json") for r in rows], sort_keys=True)
    table = ["| workload | hardware | sol_bounds run | data version |", "|---|---|---|---|",
             *(f"| {p['workload']} | {p['hardware']} | {p['run_id'][:8]} | {p['data_version']} |" for p in provenance)]
    return dg.Output(rows, data_version=dg.DataVersion(_digest(payload, *config.failures)), metadata={
        "rows": len(rows),
        "failed": len(config.failures),
        "violations": sum(1 for r in rows if r.violation),
        "failed validation": dg.MetadataValue.json(failed_validation),
        "report": dg.MetadataValue.md(format_table(rows, markdown=True) if rows else "no rows"),
        "provenance": dg.MetadataValue.md("\n".join(table)),
        "roofline": _png_md(paths["roofline"], "roofline"),
        **{f"{kind} file": dg.MetadataValue.path(str(p)) for kind, p in paths.items()},
        "provenance file": dg.MetadataValue.path(str(provenance_file)),
    })


def _measurements_by_workload(measured_runtime: dict[str, MeasuredRuntime]) -> dict[str, list[MeasuredRuntime]]:
    """``measured_runtime`` partitions (``backend|workload``) grouped by workload key."""
    out: dict[str, list[MeasuredRuntime]] = {}
    for key, value in measured_runtime.items():
        workload = key.split("|", 1)[1] if "|" in key else value.measurement.workload
        out.setdefault(workload, []).append(value)
    return out


def _with_measurement(row: ReportRow, values: list[MeasuredRuntime]) -> ReportRow:
    """The host row with every backend's latest measurement (the framework's native backend
    first: it is the report's default), headroom and the violation audit (``measure.audit``:
    judged against the provable bounds only)."""
    from solar_assets.measure import add_measurement
    from solar_assets.measure.backends import NATIVE
    from solar_assets.measure.workload import WorkloadMeasurement

    first = values[0].measurement
    native = NATIVE.get(first.framework, "eager")
    timings = sorted((t for v in values for t in v.measurement.timings.values()),
                     key=lambda t: (t.backend != native, t.backend))
    merged = WorkloadMeasurement(row.workload, first.path, first.framework,
                                 timings={t.backend: t for t in timings},
                                 notes=[n for v in values for n in v.measurement.notes])
    return add_measurement(row, merged, HOST_SPEC)


def _provenance(instance: dg.DagsterInstance, keys: list[str], rows: list[ReportRow]) -> list[dict[str, str]]:
    """For each row, the run and data version of its latest ``sol_bounds`` materialisation (one
    query for the storage ids, one for their records)."""
    wanted = {k for k in keys if "|" in k}
    latest = instance.get_latest_storage_id_by_partition(sol_bounds.key, dg.DagsterEventType.ASSET_MATERIALIZATION,
                                                         wanted or None)
    by_id = {}
    if latest:
        records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=sol_bounds.key,
                                                                        storage_ids=list(latest.values())),
                                                  limit=len(latest)).records
        by_id = {r.storage_id: r for r in records}
    out = []
    for key, row in zip(keys, rows):
        record = by_id.get(latest.get(key, -1))
        tags = record.asset_materialization.tags if record and record.asset_materialization else {}
        out.append({"workload": row.workload, "hardware": row.hardware, "partition": key,
                    "run_id": record.run_id if record else "", "data_version": (tags or {}).get(
                        "dagster/data_version", "")})
    return out


def _workload_of(key: str, row: ReportRow, wanted: list[str] | None) -> str:
    """The workload partition key of a ``sol_bounds`` partition (``hardware|workload``: Dagster
    joins the dimensions in name order, and keys escape ``|``). The only partition of a one-partition
    definition has no key: then the row's own name, or the one workload asked for."""
    if "|" in key:
        return key.split("|", 1)[1]
    return wanted[0] if wanted and len(wanted) == 1 else row.workload


def _by_partition(value: ByPartition[T]) -> dict[str, T]:
    """A multi-partition input as ``{partition key: value}`` (see ``headroom_report``)."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else {"(the only partition)": value}


WORKLOAD_ASSETS = (workload_source, golden_outputs, ir_translation, ir_validation, einsum_graph, ski_slope)
BOUND_ASSETS = (sol_bounds, cache_aware_bound, inverse_roofline)
ASSETS = (*WORKLOAD_ASSETS, hardware_spec, *BOUND_ASSETS, measured_runtime, headroom_report)
