"""One function per stage of the chain, each over the previous stages' typed values.

No stage calls another: the chain (``solar_assets.chain.run``) and the Dagster assets compose
them. A stage announces itself (``progress.starting``), reads its on-disk cache through
``solar_assets.cache_store`` (keyed by the source, the producing code and the options that
matter), and takes its options from a ``RunConfig`` argument, never from the environment.

The stage packages import torch / numba / pyomo: they are loaded inside the functions, so that
importing the chain (the CLI's start) stays cheap.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from solar_assets import cache_store
from solar_assets.chain.artifacts import SizeChoice
from solar_assets.chain.config import RunConfig
from solar_assets.progress import starting
from solar_assets.stage_clock import clocked
from solar_assets.errors import SolarError
from solar_assets.validate.errors import ValidationFailed
from solar_assets.validate.validated import ValidatedIR, validation_summary

if TYPE_CHECKING:
    from ir_schemas import ReportRow
    from solar_assets.bounds import InverseRoofline, SolBounds
    from solar_assets.bounds.cache_aware import CacheAwareOutcome
    from solar_assets.bounds.units import Fp32Math
    from solar_assets.golden import Golden
    from solar_assets.graph import EinsumGraph
    from solar_assets.hardware import HardwareSpec
    from solar_assets.measure import MeasureOptions
    from solar_assets.sizing import ValidationSize
    from solar_assets.translate import Translation
    from solar_assets.workloads import WorkloadSource

logger = logging.getLogger(__name__)

# The packages whose sources key each cache (``cache_store.package_fingerprint``).
TRACE_PACKAGES = ("solar_assets.translate", "solar_assets.agent", "solar_assets.ir", "ir_schemas", "solar_assets.workloads")
GOLDEN_PACKAGES = ("solar_assets.golden", "solar_assets.workloads", "solar_assets.ir")
SIZE_PACKAGES = (*TRACE_PACKAGES, "solar_assets.golden", "solar_assets.sizing")
CACHE_AWARE_PACKAGES = ("solar_assets.bounds.cache_aware", "solar_assets.graph")


# ---------------------------------------------------------------------------- source and IR
def read_source(path: str | Path, config: RunConfig, cache_dir: Path | None = None) -> WorkloadSource:
    """The workload file, hashed, with its framework: ``config.framework``, else detected; with
    ``cache_dir``, keyed by what its last load read too (``workloads.reads``)."""
    from solar_assets.workloads import read_workload_source

    src = read_workload_source(path, config.framework or None, cache_dir, train=config.train)
    if src.framework not in ("torch", "jax"):
        raise SolarError(f"{src.path}: neither a PyTorch nor a JAX workload (no 'torch', 'jax' or 'flax' import "
                         "found); a PyTorch workload defines class Model(nn.Module), get_inputs() and "
                         "get_init_inputs(), a JAX one get_inputs() and forward(*inputs) or a Flax class Model")
    return src


@clocked("trace")
def translate(src: WorkloadSource, config: RunConfig, cache_dir: Path | None = None,
              constants: Mapping[str, int] | None = None) -> Translation:
    """The workload's IR by ``config.translator`` ("tracer", "agent" or "auto": see
    ``solar_assets.agent.modes``), at its own size or with ``constants`` rebound. Cached
    by source hash, constants and translator code; for the agent modes also by model and prompt
    hash, the provenance (attempts, their diagnostics, tokens) kept in the cache file."""
    from solar_assets.translate import Translation

    constants = dict(constants or {})
    translator = config.translator
    starting(src.name, "trace" if not constants else f"trace at {_label(constants)}")
    cached = _ir_entry(src, cache_dir, translator, constants)
    translation = cache_store.load_json(cached, Translation.from_json)
    if translation is not None:
        logger.debug("%s: IR from cache %s", src.name, cached)
        return translation if translator == "tracer" else dataclasses.replace(translation, from_cache=True)
    from solar_assets.workloads.reads import recorded_reads

    with recorded_reads(src):  # what the trace's run of forward reads too (workloads.reads)
        if translator != "tracer":
            from solar_assets.agent import translate as agent_translate

            # the agent validates its candidates: it is handed the golden stage, not the chain
            translation = agent_translate(src, translator, constants, cache_dir,
                                          golden=lambda: golden(src, constants, cache_dir))
        elif src.framework == "jax":
            from solar_assets.translate.jax_tracer import trace_jax

            translation = trace_jax(src, constants or None)
        else:
            from solar_assets.translate.torch_tracer import trace_torch  # only here: the JAX path loads no torch

            translation = trace_torch(src, constants or None)
    keep_reads(src, cache_dir)  # before the key is made again: it holds what the trace read (WorkloadSource.reads_key)
    cache_store.store_json(_ir_entry(src, cache_dir, translator, constants), translation.to_json())
    return translation


def keep_reads(src: WorkloadSource, cache_dir: Path | None) -> None:
    """Save what the loads of this process read for ``src`` (``workloads.reads``): the next read of
    the source keys everything by them."""
    from solar_assets.workloads.reads import save_manifest

    if save_manifest(cache_dir, src.name, src.path, src.files_version):
        logger.info("%s: it reads environment variables or files outside its directory: they are part of its "
                    "key from now on", src.name)


def cached_translation(src: WorkloadSource, config: RunConfig, cache_dir: Path | None) -> Translation | None:
    """The full-size IR from the cache, or None: never traces, so never runs the workload's code
    (for the CLI process, which leaves running workload code to the worker processes)."""
    from solar_assets.translate import Translation

    return cache_store.load_json(_ir_entry(src, cache_dir, config.translator, {}), Translation.from_json)


def _ir_entry(src: WorkloadSource, cache_dir: Path | None, translator: str,
              constants: Mapping[str, int]) -> Path | None:
    variant: dict[str, object] = dict(constants)
    if translator != "tracer":
        variant.update(_agent_variant(translator))
    return cache_store.source_entry(cache_dir, "ir", src, TRACE_PACKAGES, ".json", variant)


def _agent_variant(translator: str) -> dict[str, object]:
    """The agent modes' part of the IR cache key: mode, model and prompt hash. Raises
    ``AgentNotConfigured`` for ``agent`` without a model (``auto`` runs as the tracer then)."""
    from solar_assets.agent import TRANSLATORS, agent_settings, prompt_sha256

    if translator not in TRANSLATORS:
        raise SolarError(f"unknown translator {translator!r}; choose one of {', '.join(TRANSLATORS)}")
    settings = agent_settings(required=translator == "agent")
    return {"translator": translator, "model": settings.model_name if settings else None, "prompt": prompt_sha256()}


# ---------------------------------------------------------------------------- the validation size
@clocked("sizing")
def choose_size(src: WorkloadSource, translation: Translation, config: RunConfig,
                cache_dir: Path | None = None) -> ValidationSize:
    """The size to validate at (``solar_assets.sizing.choose_validation_size``): full size where
    its IR is within ``config.validation_budget``, the file's ``SOLAR_VALIDATION_SIZES`` where it
    declares one, else its constants scaled down. The search traces candidate sizes (through the
    IR cache); the choice is cached by source, code and budget. Raises ``ValidationSizeError``
    naming the file."""
    from solar_assets.sizing import ValidationSize, ValidationSizeError, choose_validation_size

    budget = config.validation_budget

    def entry() -> Path | None:  # made again to store: the search's traces may record the first reads
        return cache_store.source_entry(cache_dir, "size", src, SIZE_PACKAGES, ".json",
                                        {"bytes": budget.tensor_bytes, "iterations": budget.iterations, "share": budget.scaled_share,
                                         **({"translator": translation.mode} if translation.mode != "tracer" else {})})

    hit = cache_store.load_json(entry(), lambda data: ValidationSizeError(str(data["error"]), data.get("nodewise_at"))
                                if "error" in data else ValidationSize.from_json(json.dumps(data)))
    if isinstance(hit, ValidationSizeError):  # no size worked, with this source and code: not searched again
        raise hit
    if hit is not None:  # announced only when searched: the golden stage asks again, from this entry
        return hit
    starting(src.name, "size")
    retrace_config = dataclasses.replace(config, translator=translation.mode)
    try:
        size = choose_validation_size(src.path, translation.program,
                                      lambda constants: translate(src, retrace_config, cache_dir, constants).program,
                                      budget)
    except ValidationSizeError as e:
        cache_store.store_json(entry(), {"error": str(e), **({"nodewise_at": e.nodewise_at} if e.nodewise_at else {})})
        raise
    logger.info("%s: validation size %s (%s)", src.name, size.label, size.reason)
    cache_store.store(entry(), size.to_json())
    return size


def choose_size_or_nodewise(src: WorkloadSource, translation: Translation, config: RunConfig,
                            cache_dir: Path | None = None) -> SizeChoice:
    """``choose_size``, or node-wise validation at the file's own size for a tracer IR that no
    size fits (``SizeChoice.size`` None, with the reason)."""
    from solar_assets.sizing import ValidationSizeError

    try:
        return SizeChoice(choose_size(src, translation, config, cache_dir))
    except ValidationSizeError as e:
        if translation.translator != "tracer":
            raise
        logger.info("%s: %s; validating node-wise at the file's own size", src.name, str(e).splitlines()[0])
        return SizeChoice(None, e)


def retrace(src: WorkloadSource, translation: Translation, constants: Mapping[str, int],
            cache_dir: Path | None = None) -> Translation | None:
    """The IR again at the validation size (``constants``; None at full size), by the translator
    that made ``translation``, checked to have its structure (``ValidationSizeError`` if not):
    the IR that validation runs in place of the full-size one."""
    from solar_assets.sizing import check_same_structure

    if not constants:
        return None
    small = translate(src, RunConfig(translator=translation.mode), cache_dir, constants)
    check_same_structure(src.path, translation.program, small.program, constants)
    return small


# ---------------------------------------------------------------------------- golden and validation
@clocked("golden")
def golden(src: WorkloadSource, size: ValidationSize | Mapping[str, int], cache_dir: Path | None = None) -> Golden:
    """The workload's golden outputs at ``size`` (a ``ValidationSize``, or the constants to rebind;
    {} = full size), from the cache when this source and code made them before."""
    from solar_assets.golden import load_golden, make_golden, save_golden
    from solar_assets.golden.recipe import golden_nbytes

    constants = dict(getattr(size, "constants", size))
    starting(src.name, "golden" if not constants else f"golden at {_label(constants)}")
    cached = cache_store.source_entry(cache_dir, "golden", src, GOLDEN_PACKAGES, ".npz", constants)
    hit = load_golden(cached) if cached is not None else None  # None too for a corrupt entry (a warning)
    if hit is not None:
        logger.debug("%s: golden outputs from cache %s", src.name, cached)
        return hit
    from solar_assets.workloads.reads import recorded_reads

    with recorded_reads(src):  # what forward reads in the golden run too (workloads.reads)
        if src.framework == "jax":
            from solar_assets.golden.jax_golden import make_jax_golden

            made = make_jax_golden(src, constants)
        else:
            made = make_golden(src, constants)
    keep_reads(src, cache_dir)
    cached = cache_store.source_entry(cache_dir, "golden", src, GOLDEN_PACKAGES, ".npz", constants)  # with the reads
    if cached is not None and golden_nbytes(made) <= GOLDEN_CACHE_MAX_BYTES:
        save_golden(made, cached)
    elif cached is not None:
        logger.debug("%s: golden outputs of %d bytes not cached (over %d: the verdict cache answers a repeat run)",
                     src.name, golden_nbytes(made), GOLDEN_CACHE_MAX_BYTES)
    return made


GOLDEN_CACHE_MAX_BYTES = 32 << 20
"""The largest golden entry (inputs, weights and outputs) kept on disk. A passed validation is
cached by its verdict, so a golden entry is read again only when the IR changed; a KernelBench run
that kept every one wrote ~50 GB (its GEMMs keep 8192 × 8192 weights at the validation size).
Larger ones are made again from the seed when needed (one forward pass)."""


@clocked("validate (cache, transport)")
def validate(src: WorkloadSource, translation: Translation, golden_outputs: Golden,
             scaled: Translation | None = None, cache_dir: Path | None = None) -> ValidatedIR:
    """Run the IR on the golden inputs; raise ``ValidationFailed`` unless every output matches.
    At a smaller validation size (``golden_outputs.constants``) ``scaled`` is the IR re-traced
    there (``retrace``), and that IR is what runs. A passed verdict is cached by the program's
    digest, the golden size and the checking code."""
    from solar_assets import validate as validate_package  # looked up per call (tests replace it)
    from solar_assets.validate.verdict_cache import VERDICT_PACKAGES, load_verdict, program_digest, save_verdict

    program = scaled.program if scaled is not None else translation.program
    starting(src.name, "validate" if scaled is None else f"validate at {golden_outputs.size_label}")
    verdict_path = cache_store.source_entry(cache_dir, "verdict", src, VERDICT_PACKAGES, ".json",
                                            {**golden_outputs.constants, "program": program_digest(program)})
    result = load_verdict(verdict_path)  # an accepted verdict of this very IR, golden and code
    if result is None:
        from solar_assets.workers.checker import checked_validation

        traced = translation.translator == "tracer"
        result = checked_validation(program, golden_outputs, source=str(src.path), traced=traced)  # a worker's checker
        if result is None:
            result = validate_package.validate_program(program, golden_outputs, source=str(src.path), traced=traced)
        save_verdict(verdict_path, result)
    at = "" if scaled is None else f" at validation size {golden_outputs.size_label}"
    if not result.ok:
        raise ValidationFailed(f"{src.path}: the {translation.translator} IR failed validation{at}: "
                               + validation_summary(result), result)
    return ValidatedIR(translation=translation, result=result, validated_size=golden_outputs.size_label,
                       validated_program=scaled.program if scaled is not None else None)


@clocked("node-wise validation")
def validate_nodewise(src: WorkloadSource, translation: Translation, choice: SizeChoice, config: RunConfig,
                      cache_dir: Path | None = None) -> ValidatedIR:
    """Validation when no scaled-down size fits the whole-program budget (``choice.nodewise``): each
    op group of the IR checked on the framework's own values (``validate.nodewise``) at the file's
    own size, or, where one pass at that size is over ``config.nodewise_bytes``, at the cheapest
    scaled size the search traced with the full IR's structure (``choice.error.nodewise_at``: the
    IR re-traced there, as a scaled whole-program validation runs it). A ``ValidatedIR`` whose
    ``validated_size`` starts "node-wise"; ``ValidationFailed`` if a group fails;
    ``ValidationSizeError`` naming the file and the sizes when no pass fits. A passed verdict is
    cached by source, IR, size, budget and code."""
    from solar_assets.golden.capture import CaptureTooBig
    from solar_assets.sizing import ValidationSizeError

    first = str(choice.error).splitlines()[0] if choice.error is not None else "no scaled-down size worked"
    try:
        return _nodewise_at(src, translation, translation, {}, config, cache_dir)
    except CaptureTooBig as e:
        too_big = str(e).removeprefix(f"{src.path}: ")
        scaled_at = getattr(choice.error, "nodewise_at", None)
        if not scaled_at:
            raise ValidationSizeError(f"{first}; and {too_big}") from None
    logger.info("%s: %s; validating node-wise at %s", src.name, too_big, _label(scaled_at))
    scaled = retrace(src, translation, scaled_at, cache_dir)
    try:
        return _nodewise_at(src, translation, scaled, scaled_at, config, cache_dir)
    except CaptureTooBig as e:
        raise ValidationSizeError(f"{first}; {too_big}; and {str(e).removeprefix(f'{src.path}: ')}") from None


def _nodewise_at(src: WorkloadSource, translation: Translation, checked: Translation, constants: Mapping[str, int],
                 config: RunConfig, cache_dir: Path | None) -> ValidatedIR:
    """``validate.nodewise`` of ``checked`` (``translation``'s IR, or its re-trace at ``constants``)."""
    from solar_assets.validate import nodewise
    from solar_assets.validate.verdict_cache import VERDICT_PACKAGES, load_verdict, program_digest, save_verdict

    from solar_assets.golden.capture import CaptureTooBig

    starting(src.name, "validate node-wise" + (f" at {_label(constants)}" if constants else ""))
    packages = (*VERDICT_PACKAGES, "solar_assets.translate", "solar_assets.agent")
    key = {"nodewise": nodewise.POINTS, "bytes": config.nodewise_bytes, **dict(constants),
           "program": program_digest(checked.program)}
    verdict_path = cache_store.source_entry(cache_dir, "verdict", src, packages, ".json", key)
    # a pass refused as too big is refused again at once (its export at that size costs minutes)
    refused_path = cache_store.source_entry(cache_dir, "capture_refused", src, packages, ".json", key)
    refused = cache_store.load_json(refused_path, lambda data: str(data["too_big"]))
    if refused is not None:
        raise CaptureTooBig(refused)
    result = load_verdict(verdict_path)
    if result is None:
        from solar_assets.workers.checker import nodewise_checker

        try:
            result = nodewise.validate_nodewise(src, checked, budget_bytes=config.nodewise_bytes, constants=constants,
                                                make_checker=nodewise_checker())  # a worker's checker, or here
        except CaptureTooBig as e:
            cache_store.store_json(refused_path, {"too_big": str(e)})
            raise
    save_verdict(verdict_path, result)
    at = f" at {_label(constants)}" if constants else ""
    if not result.ok:
        raise ValidationFailed(f"{src.path}: the {translation.translator} IR failed node-wise validation{at}: "
                               + validation_summary(result), result)
    return ValidatedIR(translation=translation, result=result, validated_size=nodewise.LABEL + at,
                       validated_program=checked.program if constants else None)


# ---------------------------------------------------------------------------- graph and bounds
@clocked("graph")
def lift_graph(src: WorkloadSource, validated: ValidatedIR) -> EinsumGraph:
    """The validated full-size IR as an einsum graph (exact MACs, FLOPs, bytes per node)."""
    from solar_assets.graph import build_einsum_graph

    starting(src.name, "graph")
    return build_einsum_graph(validated.program)


def load_spec(name: str, hardware_dir: str | Path | None = None) -> HardwareSpec:
    """A hardware spec by name (``hardware/<name>.yaml``, or ``hardware_dir``'s)."""
    from solar_assets.hardware import load_hardware

    return load_hardware(name, hardware_dir) if hardware_dir else load_hardware(name)


@clocked("bounds")
def bound_graph(src: WorkloadSource, graph: EinsumGraph, hw: HardwareSpec, config: RunConfig) -> SolBounds:
    """``sol_bounds`` under ``config.fp32_math`` (``auto``: resolved from the file's settings)."""
    from solar_assets.bounds import sol_bounds

    starting(src.name, f"bounds {hw.name}")
    return sol_bounds(graph, hw, fp32_math=fp32_math_of(src, config.fp32_math))


def fp32_math_of(src: WorkloadSource, policy: str = "auto") -> Fp32Math:
    """The fp32-math policy for this workload: ``policy``, ``auto`` resolved from the file's settings."""
    from solar_assets.bounds.units import fp32_math_for

    try:
        text = Path(src.path).read_text(encoding="utf-8", errors="replace") if policy == "auto" else ""
    except OSError:
        text = ""  # the frameworks' defaults then
    return fp32_math_for(text, policy)


@clocked("inverse roofline")
def inverse_for(src: WorkloadSource, hw: HardwareSpec, target_latency_s: float | None,
                bounds: SolBounds) -> InverseRoofline | None:
    """The inverse roofline at ``target_latency_s`` from ``bounds`` (None when no target was asked for)."""
    if target_latency_s is None:
        return None
    if not target_latency_s > 0:
        raise SolarError(f"target latency must be positive seconds, got {target_latency_s!r}")
    from solar_assets.bounds import inverse_roofline

    starting(src.name, f"inverse roofline {hw.name}")
    return inverse_roofline(bounds, target_latency_s)


@clocked("cache-aware ILP", part=lambda src, graph, hw, *a, **k: hw.name)
def cache_aware_for(src: WorkloadSource, graph: EinsumGraph, hw: HardwareSpec,
                    cache_dir: Path | None = None) -> CacheAwareOutcome:
    """The cache-aware bracket (``CacheAwareOutcome``): the best modelled schedule at ``hw``'s on-chip
    buffer (L2) and the provable lower bound at all its on-chip storage; never raises for
    a solver failure (glpsol missing, infeasible, time limit): the outcome's ``error`` says why and
    the other modes stand. Cached on disk by graph digest, capacity and solver code, so hardware
    sharing a buffer size, and a re-run, reuse the solve."""
    from solar_assets.bounds.cache_aware import CacheAwareOutcome, cache_aware_outcome

    capacity, onchip_total = int(hw.onchip_buffer_bytes), int(hw.onchip_total_bytes)
    starting(src.name, f"cache-aware {hw.name}")
    cached = cache_store.digest_entry(cache_dir, "cache_aware", src.name, graph, CACHE_AWARE_PACKAGES,
                                      f"{capacity}:{onchip_total}")
    hit = cache_store.load(cached, lambda data: CacheAwareOutcome.from_json(data.decode()))
    if hit is not None:
        return hit
    outcome = cache_aware_outcome(graph, capacity, lb_capacity_bytes=onchip_total)
    if outcome.error:
        logger.warning("%s: %s", src.path, outcome.error)
    for fault in outcome.ordering_faults():
        logger.error("%s on %s: mode ordering broken: %s", src.path, hw.name, fault)
    if outcome.ok:  # a failure is not cached: glpsol may be installed later
        cache_store.store(cached, outcome.to_json())
    return outcome


@clocked("ski-slope")
def ski_slope_for(src: WorkloadSource, graph: EinsumGraph, out_dir: Path, marks: Mapping[str, int] | None = None,
                  cache_dir: Path | None = None) -> dict[str, Path]:
    """The workload's ski-slope (minimum DRAM traffic against buffer capacity, 64 KiB to 1 GiB) as
    ``<out_dir>/<workload>.csv`` and ``.png``, with ``marks`` (hardware name -> buffer bytes) drawn."""
    from solar_assets.bounds.cache_aware import SkiSlope, SkiSlopeRow, ski_slope

    starting(src.name, "ski-slope")
    cached = cache_store.digest_entry(cache_dir, "skislope", src.name, graph, CACHE_AWARE_PACKAGES, "sweep")
    slope = cache_store.load_json(cached, lambda rows: SkiSlope(src.name, tuple(SkiSlopeRow(**r) for r in rows)))
    if slope is None:
        slope = SkiSlope(src.name, ski_slope(graph).rows)
        cache_store.store_json(cached, [r.__dict__ for r in slope.rows])
    out_dir = Path(out_dir)
    from solar_assets.paths import file_stem

    stem = file_stem(src.name)
    return {"csv": slope.write_csv(out_dir / f"{stem}.csv"),
            "png": slope.write_png(out_dir / f"{stem}.png", marks)}


# ---------------------------------------------------------------------------- measurement
def measure_rows(path: str | Path, rows: list[ReportRow], options: MeasureOptions | None = None,
                 host: str = "host") -> list[ReportRow]:
    """Run the workload on this host (``solar_assets.measure``) and fill the measured, headroom and
    violation columns of its rows on ``host`` (the hardware the run used). Rows on other hardware
    come back unchanged, and nothing runs when there is no such row. Never cached: a measurement
    belongs to the moment and the machine."""
    from solar_assets.measure import MeasureOptions, add_measurement, measure_workload

    rows = list(rows)
    if not any(r.hardware == host for r in rows):
        return rows
    name = Path(path).stem
    measurement = measure_workload(path, options or MeasureOptions(), progress=lambda stage: starting(name, stage))
    failed = {t.error for t in measurement.timings.values() if t.error}
    for note in measurement.notes:
        (logger.warning if note in failed else logger.info)("%s", note)
    return [add_measurement(r, measurement, host) for r in rows]


def measure_ops(path: str | Path, graph, per_op: list, rows: list[ReportRow], options: MeasureOptions | None = None,
                host: str = "host") -> list:
    """The per-op headroom on ``host`` (``measure.op_join.OpJoin``, one for the eager backend when
    ``options`` asks for per-op measurement and the file has a row on ``host``): the eager run
    profiled (``measure.op_measure``) and joined with the per-op rows. A run that cannot be
    profiled is a warning naming the file, and no join."""
    from solar_assets.measure import MeasureOptions
    from solar_assets.measure.backends import LABELS, MeasureError
    from solar_assets.measure.op_join import ir_calls, join_profile
    from solar_assets.measure.op_measure import profile_workload

    options = options or MeasureOptions()
    row = next((r for r in rows if r.hardware == host), None)
    if not options.per_op or row is None:
        return []
    name = Path(path).stem
    starting(name, "measure per op")
    try:
        profile = profile_workload(path, "eager", flush_bytes=options.flush_bytes, threads=options.threads)
    except MeasureError as e:
        logger.warning("%s", e)
        return []
    from solar_assets.workloads import read_workload_source

    backend = LABELS.get((read_workload_source(path).framework, "eager"), "eager")
    on_host = [r for r in per_op if r.hardware == host]
    return [join_profile(row.workload, host, backend, ir_calls(graph, on_host), profile,
                         row.onchip_buffer_bytes, row.dram_bytes_per_s)]


def _label(constants: Mapping[str, int]) -> str:
    from solar_assets.workloads import size_label

    return size_label(constants)
