"""The per-workload assets as plain functions: the file, its golden outputs, its IR, the IR's
verdict, the einsum graph and its ski-slope; each a thin call into a stage of ``solar_assets.chain``.

A user-facing stage error is raised as it comes (``SolarError``, one line naming the file; a failed
validation as ``ValidationFailed``, whose per-output table ``validation_metadata`` gives): the
Dagster wrapper turns it into a ``dg.Failure``, a worker into a failed event.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path


from solar_assets.asset_compute import metadata as md
from solar_assets.asset_compute.code_versions import code_version
from solar_assets.asset_compute.computed import Computed, digest
from solar_assets.asset_compute.metadata import Column, Markdown, Metadata, Record, Schema, Table, Text
from solar_assets.asset_compute.settings import AssetSettings
from solar_assets.asset_compute.storage import file_version
from solar_assets.chain import run as chain
from solar_assets.chain import stages
from solar_assets.validate.validated import ValidatedIR
from solar_assets.errors import SolarError, one_line
from solar_assets.golden import Golden
from solar_assets.golden.recipe import CAP_ENV, GoldenRecipe, check_remade, golden_digest, golden_nbytes, stored_golden_cap
from solar_assets.graph import EinsumGraph
from solar_assets.ir.printer import format_program
from solar_assets.paths import file_stem
from solar_assets.stage_clock import clocked
from solar_assets.translate import Translation
from solar_assets.validate import ValidationResult
from solar_assets.workloads import WorkloadSource

CODE_VERSIONS = {
    "workload_source": ("solar_assets.workloads",),
    "golden_outputs": ("solar_assets.golden",),
    "ir_translation": ("solar_assets.translate", "solar_assets.agent"),
    "ir_validation": ("solar_assets.validate", "solar_assets.execute"),
    "einsum_graph": ("solar_assets.graph",),
    "ski_slope": ("solar_assets.bounds.cache_aware", "solar_assets.graph"),
}
"""The packages whose code each asset's code version follows (``code_versions.code_version``)."""


def unchanged(picture: Path, drawn_from: str) -> bool:
    """Whether ``picture`` was drawn from data with this digest (its ``.digest`` sidecar): then it
    is not drawn again (drawing the pictures was about 3 s of a warm workload's 11 on the Dagster
    path, bench/dagster_overhead.py)."""
    sidecar = picture.with_name(picture.name + ".digest")
    return picture.is_file() and sidecar.is_file() and sidecar.read_text() == drawn_from


def mark_drawn(picture: Path, drawn_from: str) -> None:
    picture.with_name(picture.name + ".digest").write_text(drawn_from)


def workload_source(key: str, solar: AssetSettings) -> Computed[WorkloadSource]:
    """The workload file (KernelBench convention), its content hash and framework."""
    from solar_assets.asset_compute.keys import split_train_key

    train = split_train_key(key)[1] or solar.run_config.train  # Dagster: the step's own partition (keys.train_key)
    src = stages.read_source(solar.workload_path(key), dataclasses.replace(solar.run_config, train=train),
                             solar.cache_dir)
    return Computed(src, src.version, {
        "file": md.FilePath(src.path),
        "sha256": src.sha256,
        "framework": src.framework,
        "source": md.code(Path(src.path).read_text(encoding="utf-8", errors="replace"), "python"),
    })


def golden_outputs(workload_source: WorkloadSource, ir_translation: Translation,
                   solar: AssetSettings) -> Computed[Golden | None]:
    """The workload run by PyTorch on seeded inputs (float32 as written, and float64), at its
    validation size (full, or its size constants scaled down: see ``solar_assets.sizing``), which
    the IR's own sizes decide — hence the input ``ir_translation``. None where no size fits:
    ``ir_validation`` then validates node-wise at the file's own size."""
    choice = stages.choose_size_or_nodewise(workload_source, ir_translation, solar.run_config, solar.cache_dir)
    golden = chain.golden_at(workload_source, choice, solar.cache_dir)
    if golden is None:
        why = str(choice.error).splitlines()[0] if choice.error is not None else "no validation size fits"
        return Computed(None, digest("node-wise", why), {
            "validation size": "node-wise (no golden run at one size)", "note": why})
    shapes = lambda xs: ", ".join(f"{a.dtype}{list(a.shape)}" for a in xs)  # noqa: E731
    nbytes, cap = golden_nbytes(golden), stored_golden_cap()
    return Computed(golden, golden_digest(golden), {
        "inputs": shapes(golden.inputs),
        "outputs": shapes(golden.outputs),
        "parameters": len(golden.params),
        "validation size": golden.size_label,
        "seconds": md.seconds(golden.seconds),
        "stored as": (f"the arrays ({md.data_size(nbytes).text})" if nbytes <= cap else
                      f"their digest and the recipe ({md.data_size(nbytes).text} of arrays, over the "
                      f"{md.data_size(cap).text} cap of {CAP_ENV}): ir_validation makes them again from the seed"),
    })


def ir_translation(workload_source: WorkloadSource, solar: AssetSettings) -> Computed[Translation]:
    """Affine Loop IR of the workload, with its provenance (translator, model, attempts)."""
    translation = stages.translate(workload_source, solar.run_config, solar.cache_dir)
    program = translation.program
    kernels = sum(1 for s in program.steps if s.kind == "kernel")
    return Computed(translation, digest(program.model_dump_json()), {
        "translator": translation.translator,
        "model": translation.model or "",
        "attempts": translation.attempts,
        "seconds": md.seconds(translation.seconds),
        "kernels": kernels,
        "steps": len(program.steps),
        "tensors": len(program.tensors),
        "diagnostics": Text("\n".join(translation.diagnostics) or "none"),
        **_agent_metadata(translation),
        "IR": md.code(format_program(program)),
    })


def _agent_metadata(translation: Translation) -> Metadata:
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
        "attempt log": Markdown("\n".join(["| task | attempt | verdict | input tokens | output tokens "
                                           "| diagnostics |", "|---|---:|---|---:|---:|---|", *rows])),
    }


def validation_metadata(result: ValidationResult | None) -> Metadata:
    """The verdict and the per-output error table (also on a failed validation's failure)."""
    if result is None:
        return {}
    columns = tuple(Column(name, kind) for name, kind in (
        ("output", "string"), ("ok", "bool"), ("shape", "string"), ("golden_shape", "string"),
        ("dtype", "string"), ("max_abs_error", "float"), ("max_rel_error", "float"),
        ("tolerance_abs", "float"), ("message", "string")))
    records = tuple(Record({
        "output": c.name, "ok": bool(c.ok), "shape": str(c.shape), "golden_shape": str(c.golden_shape),
        "dtype": str(c.dtype), "max_abs_error": md.rounded(float(c.max_abs_error), 2),
        "max_rel_error": md.rounded(float(c.max_rel_error), 2), "tolerance_abs": md.rounded(float(c.tolerance_abs), 2),
        "message": c.message or ""}) for c in result.checks)
    return {
        "verdict": "pass" if result.ok else "FAIL",
        "max_abs_error": md.error(result.max_abs_error),
        "max_rel_error": md.error(result.max_rel_error),
        "checks": Table(records, Schema(columns)),
    }


def ir_validation(workload_source: WorkloadSource, ir_translation: Translation,
                  golden_outputs: Golden | GoldenRecipe | None, solar: AssetSettings) -> Computed[ValidatedIR]:
    """The IR run on the golden inputs and compared per output; a failure stops everything downstream.
    At a scaled-down validation size, the IR traced at that size runs (same structure, checked);
    where no size fits (``golden_outputs`` None), the IR is validated node-wise at full size. Golden
    values stored as their recipe (``golden.recipe``) are made again from the seed, digest checked."""
    choice = stages.choose_size_or_nodewise(workload_source, ir_translation, solar.run_config,
                                            solar.cache_dir)  # cached by golden_outputs
    origin: Metadata = {}
    if isinstance(golden_outputs, GoldenRecipe):
        recipe = golden_outputs
        golden_outputs = check_remade(stages.golden(workload_source, recipe.constants, solar.cache_dir), recipe,
                                      workload_source.path)
        origin = {"golden outputs": f"made again from the seed (digest {recipe.digest}, as stored)"}
    validated = chain.validate_at(workload_source, ir_translation, choice, golden_outputs, solar.run_config,
                                  solar.cache_dir)
    result = validated.result
    return Computed(validated, digest(ir_translation.program.model_dump_json(), "pass"),
                    {**validation_metadata(result), "seconds": md.seconds(result.seconds),
                     "validation size": validated.validated_size, **origin})


def einsum_graph(workload_source: WorkloadSource, ir_validation: ValidatedIR, solar: AssetSettings,
                 draw: bool = True) -> Computed[EinsumGraph]:
    """Extended einsums with exact MACs, FLOPs and bytes per node; with its picture unless
    ``draw`` is False (a worker of ``solar analyze`` leaves it to the CLI: ``graph_picture``)."""
    graph = stages.lift_graph(workload_source, ir_validation)
    metadata: Metadata = {
        "MACs": int(graph.macs),  # exact counts as numbers: Dagster plots them
        "FLOPs": int(graph.flops),
        "MACs / FLOPs": Text(f"{md.count(graph.macs).text} / {md.count(graph.flops).text}"),
        "bytes unfused per IR kernel": md.data_size(int(graph.bytes_unfused)),  # report: bytes_unfused_kernel
        "bytes fused (graph I/O)": md.data_size(int(graph.io_bytes)),
        "dtype": str(graph.dtype),
        "einsums": sum(1 for n in graph.nodes if n.kind != "reshape"),
    }
    if draw:
        metadata.update(graph_picture(graph, workload_source.name, solar))
    return Computed(graph, str(graph.digest()), metadata)


@clocked("pictures")
def graph_picture(graph: EinsumGraph, name: str, solar: AssetSettings) -> Metadata:
    """``{"graph": the picture}``, drawn under ``$SOLAR_HOME/graphs`` unless drawn from the same
    graph before; a picture is a nicety: when it cannot be drawn, the entry says why."""
    picture = Path(solar.home) / "graphs" / f"{file_stem(name)}.png"
    try:
        picture.parent.mkdir(parents=True, exist_ok=True)
        drawn_from = digest(str(graph.digest()), code_version(*CODE_VERSIONS["einsum_graph"]))
        if not unchanged(picture, drawn_from):
            graph.draw_png(picture)
            mark_drawn(picture, drawn_from)
        return {"graph": md.picture(picture, f"einsum graph of {name}")}
    except Exception as e:  # record why it is missing, keep the graph
        return {"graph": Text(f"no picture: {type(e).__name__}: {e}")}


def ski_slope(workload_source: WorkloadSource, einsum_graph: EinsumGraph, solar: AssetSettings) -> Computed[dict[str, str]]:
    """Minimum DRAM traffic against on-chip buffer capacity (64 KiB to 1 GiB, log-spaced) as CSV and
    PNG under ``$SOLAR_HOME/reports/skislope``, with the shipped hardware's buffers marked."""
    from solar_assets.hardware import list_hardware

    marks = {}
    for name in list_hardware(solar.hardware_dir):
        with contextlib.suppress(SolarError):  # a broken spec fails its own asset, not this picture
            marks[name] = buffer_bytes(name, solar.hardware_dir)
    out_dir = Path(solar.ski_slope_dir)
    stem = file_stem(workload_source.name)
    drawn = {"csv": out_dir / f"{stem}.csv", "png": out_dir / f"{stem}.png"}
    inputs = digest(str(einsum_graph.digest()), json.dumps(marks, sort_keys=True),
                    code_version("solar_assets.bounds.cache_aware"))
    try:
        if unchanged(drawn["png"], inputs) and drawn["csv"].is_file():
            paths = drawn
        else:
            paths = stages.ski_slope_for(workload_source, einsum_graph, out_dir, marks, solar.cache_dir)
            mark_drawn(paths["png"], inputs)
    except SolarError as e:  # e.g. glpsol missing: the bounds do not depend on this picture
        note = one_line(str(e))
        return Computed({}, digest(note), {"note": note})
    return Computed({k: str(v) for k, v in paths.items()}, digest(paths["csv"].read_bytes()), {
        "csv": md.FilePath(str(paths["csv"])),
        "ski-slope": md.picture(paths["png"], f"ski-slope of {workload_source.name}"),
    })


_BUFFERS: dict[tuple[str, int, int], int] = {}


def buffer_bytes(name: str, hardware_dir: str) -> int:
    """A spec's on-chip buffer, parsed once per process and file version (path, mtime, size):
    ``ski_slope`` marks every spec, and parsing the six YAMLs was 0.3 s of each workload."""
    key = file_version(Path(hardware_dir) / f"{name}.yaml")
    if key not in _BUFFERS:
        _BUFFERS[key] = int(stages.load_spec(name, hardware_dir).onchip_buffer_bytes)
    return _BUFFERS[key]
