"""The agent on a whole workload: source in, a verified Program out (or ``AgentGaveUp``).

Verification of a reply, in order: the IR checker (names, affine subscripts, bounds), the
workload's interface (one input per forward argument, every binding a real input / parameter /
buffer of the declared shape and dtype), its cost (no more MACs than the tracer's or FlopCounterMode's
count of the same program: ``cost_check``), then the IR run on the golden inputs and compared per
output, when the IR is within the validation budget at this size. Over budget, the numeric check
is left to the pipeline, which validates at a scaled-down size (asking the agent at that size).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ir_schemas import Program
from solar_assets.errors import IRError, SolarError
from solar_assets.agent.cache import AgentCache, cache_key, source_key
from solar_assets.agent.config import AgentSettings, agent_settings
from solar_assets.agent.cost_check import CostCheck
from solar_assets.agent.loop import generate_program
from solar_assets.agent.prompt import prompt_sha256, system_prompt, workload_message
from solar_assets.translate.translation import Translation
from solar_assets.workloads import WorkloadSource

log = logging.getLogger(__name__)

Bindings = dict[str, tuple[tuple[int, ...], str]]  # binding -> (shape, IR dtype)


def workload_bindings(src: WorkloadSource, constants: Mapping[str, int] | None = None) -> Bindings | None:
    """What the workload binds, built on the meta device (shapes only, no memory): ``input:i``,
    ``param:name``, ``buffer:name`` with shape and dtype. None when it cannot be built that way."""
    import torch

    from solar_assets.translate.torch_lowering.context import LoweringGap, ir_dtype
    from solar_assets.workloads import load_torch_workload

    try:
        with torch.device("meta"):
            w = load_torch_workload(src, dict(constants) if constants else None)
        out: Bindings = {}
        for i, x in enumerate(w.inputs):
            if isinstance(x, torch.Tensor):
                out[f"input:{i}"] = (tuple(int(s) for s in x.shape), ir_dtype(x.dtype))
        for kind, named in (("param", w.model.named_parameters()), ("buffer", w.model.named_buffers())):
            for name, t in named:
                out[f"{kind}:{name}"] = (tuple(int(s) for s in t.shape), ir_dtype(t.dtype))
        return out
    except (SolarError, LoweringGap, RuntimeError, TypeError, ValueError, NotImplementedError) as e:
        log.debug("%s: no meta-device interface: %s", src.path, e)
        return None


def describe_bindings(bindings: Bindings | None) -> list[str]:
    if not bindings:
        return []
    return [f"{b}: {dtype}{list(shape)}" for b, (shape, dtype) in bindings.items()]


class WorkloadVerifier:
    """Program -> diagnostics (empty: accepted) for one workload at one size."""

    def __init__(self, src: WorkloadSource, bindings: Bindings | None, golden: Callable[[], Any] | None,
                 budget: Any = None, cost: Callable[[Program], list[str]] | None = None):
        from solar_assets.sizing import ValidationBudget

        self.src, self.bindings, self.golden, self.cost = src, bindings, golden, cost
        self.budget = budget or ValidationBudget()
        self.notes: list[str] = []

    def __call__(self, program: Program) -> list[str]:
        from solar_assets.sizing import program_cost
        from solar_assets.ir import check_program

        try:
            check_program(program, self.src.path)
        except IRError as e:
            return [f"IR check: {e}"]
        problems = self.interface_problems(program) or (self.cost(program) if self.cost else [])
        if problems:
            return problems
        cost = program_cost(program)
        if self.golden is None or not cost.within(self.budget):
            self.notes.append(f"numeric validation left to the pipeline: {cost} is over the budget ({self.budget})"
                              if self.golden is not None else "no golden outputs given: checked statically only")
            return []
        return self.numeric_problems(program)

    def interface_problems(self, program: Program) -> list[str]:
        problems = []
        if self.bindings is not None:
            n_inputs = sum(1 for b in self.bindings if b.startswith("input:"))
            if len(program.inputs) != n_inputs:
                problems.append(f"the program has {len(program.inputs)} inputs but forward takes {n_inputs} tensors")
        for t in program.tensors:
            if t.role not in ("input", "weight"):
                continue
            if not t.binding:
                problems.append(f"{t.role} tensor {t.name!r} has no binding")
            elif self.bindings is not None and t.binding not in self.bindings:
                known = ", ".join(b for b in self.bindings if b.split(":")[0] == t.binding.split(":")[0]) or "none"
                problems.append(f"tensor {t.name!r} binds {t.binding!r}, which the workload does not have "
                                f"(it has: {known})")
            elif self.bindings is not None:
                shape, dtype = self.bindings[t.binding]
                if tuple(t.shape) != shape or t.dtype != dtype:
                    problems.append(f"tensor {t.name!r} is declared {t.dtype}{list(t.shape)} but {t.binding} is "
                                    f"{dtype}{list(shape)}")
        return problems

    def numeric_problems(self, program: Program) -> list[str]:
        from solar_assets.validate import validate_program

        golden = self.golden()
        try:
            result = validate_program(program, golden, source=self.src.path)
        except Exception as e:  # the reply's IR broke the executor: that is feedback, not a crash
            return [f"running the IR on the workload's inputs failed: {type(e).__name__}: {str(e).strip()}"]
        if result.ok:
            return []
        return [f"validation: {c.message}" for c in result.checks if not c.ok]  # output, errors, shapes


def translate_workload(src: WorkloadSource, constants: Mapping[str, int] | None = None,
                       cache_dir: str | Path | None = None, golden: Callable[[], Any] | None = None,
                       settings: AgentSettings | None = None) -> Translation:
    """Ask the configured chat model for the whole workload's IR (cached by source hash, constants,
    model and prompt hash). ``golden``: a callable giving the golden outputs at this size, used to
    validate each reply. Raises ``AgentNotConfigured`` or ``AgentGaveUp``."""
    from langchain_core.messages import HumanMessage, SystemMessage

    settings = settings or agent_settings()
    constants = dict(constants or {})
    key = cache_key(kind="workload", source=source_key(src), constants=constants, model=settings.model_name,
                    prompt=prompt_sha256())
    cache = AgentCache(cache_dir)
    hit = cache.load(src.name, key)
    if hit is not None:
        program, attempts, seconds = hit
        return _translation(src, program, attempts, seconds, settings, from_cache=True)
    bindings = workload_bindings(src, constants)
    messages = [SystemMessage(content=system_prompt()),
                HumanMessage(content=workload_message(src.path, src.name, Path(src.path).read_text(), constants,
                                                      describe_bindings(bindings)))]
    verify = WorkloadVerifier(src, bindings, golden, cost=CostCheck(src, constants))
    result = generate_program(settings, messages, verify, "workload", src.path)
    cache.store(src.name, key, result.program, result.attempts, result.seconds,
                {"workload": src.path, "source_sha256": src.sha256, "constants": constants,
                 "model": settings.model_name, "prompt_sha256": prompt_sha256(), "notes": verify.notes})
    return _translation(src, result.program, result.attempts, result.seconds, settings)


def _translation(src: WorkloadSource, program: Program, attempts: tuple, seconds: float, settings: AgentSettings,
                 from_cache: bool = False) -> Translation:
    return Translation(program=program, translator="agent", source_sha256=src.sha256, seconds=seconds,
                       model=settings.model_name, attempts=len(attempts), diagnostics=flat_diagnostics(attempts),
                       prompt_sha256=prompt_sha256(), attempt_log=tuple(attempts), from_cache=from_cache)


def flat_diagnostics(attempts: tuple) -> tuple[str, ...]:
    """Every rejected attempt's diagnostics, each prefixed by its task and attempt number."""
    return tuple(f"{a.task}, attempt {a.attempt}: {d}" for a in attempts for d in a.diagnostics)
