"""Auto mode: the agent lowers one graph node the tracer has no lowering for.

The tracer calls ``NodeFallback`` with the node and its resolved arguments. The sub-problem
given to the model is small and exact: the node's ATen call, its input tensors (materialised
whole, so the model sees plain tensors) and its output declarations. A reply is verified on its
own first — the IR checker, then the steps run on random inputs against the ATen op itself —
and then spliced into the program, which the pipeline validates as a whole like any other.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ir_schemas import Program, TensorDecl
from solar_assets.errors import IRError
from solar_assets.agent.cache import AgentCache, cache_key, source_key
from solar_assets.agent.config import AgentSettings
from solar_assets.agent.loop import generate_program
from solar_assets.agent.prompt import node_message, prompt_sha256, system_prompt
from solar_assets.translate.translation import AttemptRecord, TranslationError
from solar_assets.workloads import WorkloadSource

log = logging.getLogger(__name__)

# The node is checked numerically on its own only while that is cheap; the whole program is
# validated by the pipeline in any case.
NODE_CHECK_TENSOR_BYTES = 256 << 20
NODE_CHECK_ITERATIONS = 200_000_000
IR_TO_TORCH_DTYPE = {"float64": "float64", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
                     "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
                     "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool"}


def _map(value: Any, fn) -> Any:
    from solar_assets.translate.core.affine import SymTensor

    if isinstance(value, SymTensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


def _render(value: Any) -> str:
    from solar_assets.translate.core.affine import SymTensor

    if isinstance(value, SymTensor):
        return f"{value.base} ({value.dtype}{list(value.shape)})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    return repr(value) if not hasattr(value, "is_floating_point") else str(value)


@dataclass
class NodeFallback:
    """The tracer's hook for a node it cannot lower; records what the agent did for the provenance."""

    src: WorkloadSource
    settings: AgentSettings
    cache_dir: Any = None
    nodes: list[str] = field(default_factory=list)
    attempts: list[AttemptRecord] = field(default_factory=list)
    seconds: float = 0.0
    all_cached: bool = True

    def __call__(self, b: Any, node: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        from langchain_core.messages import HumanMessage, SystemMessage

        from solar_assets.translate.torch_lowering.context import Ctx
        from solar_assets.translate.core.affine import SymTensor

        seen: dict[str, SymTensor] = {}

        def whole(x: SymTensor) -> SymTensor:
            y = b.materialize(x, f"{node.name}_in")
            seen.setdefault(y.base, y)
            return y

        args, kwargs = _map(list(args), whole), _map(dict(kwargs), whole)
        inputs = list(seen.values())
        ctx = Ctx(b, node)
        val = node.meta.get("val")
        multi = isinstance(val, (tuple, list))
        outputs = [ctx.new_output(i) for i in range(len(val))] if multi else [ctx.new_output()]
        prefix = f"{node.name}_agent_"
        skeleton = Program(
            name=f"{self.src.name}_{node.name}",
            tensors=tuple([TensorDecl(name=x.base, shape=x.shape, dtype=x.dtype, role="input", binding=f"input:{i}")
                           for i, x in enumerate(inputs)]
                          + [TensorDecl(name=y.base, shape=y.shape, dtype=y.dtype, role="output") for y in outputs]),
            inputs=tuple(x.base for x in inputs), outputs=tuple(y.base for y in outputs), steps=())
        arguments = ", ".join([_render(a) for a in args] + [f"{k}={_render(v)}" for k, v in kwargs.items()])
        task = f"node {node.name}"
        key = cache_key(kind="node", source=source_key(self.src), node=node.format_node(), target=str(node.target),
                        arguments=arguments, skeleton=skeleton.model_dump(mode="json"),
                        model=self.settings.model_name, prompt=prompt_sha256())
        cache = AgentCache(self.cache_dir)
        hit = cache.load(f"{self.src.name}-{node.name}", key)
        if hit is not None:
            program, attempts, seconds = hit
        else:
            self.all_cached = False
            verify = NodeVerifier(skeleton, prefix, set(b.decls), node.target, args, kwargs, self.src.path)
            messages = [SystemMessage(content=system_prompt()),
                        HumanMessage(content=node_message(self.src.path, skeleton.name, node.format_node(),
                                                          str(node.target), arguments, prefix, skeleton))]
            result = generate_program(self.settings, messages, verify, task, self.src.path)
            program, attempts, seconds = result.program, result.attempts, result.seconds
            cache.store(f"{self.src.name}-{node.name}", key, program, attempts, seconds,
                        {"workload": self.src.path, "node": node.format_node(), "model": self.settings.model_name,
                         "prompt_sha256": prompt_sha256(), "notes": verify.notes})
        self.nodes.append(node.name)
        self.attempts.extend(attempts)
        self.seconds += seconds
        splice(b, program, skeleton, self.src.path)
        return tuple(outputs) if multi else outputs[0]


class NodeVerifier:
    """Program -> diagnostics for one node's sub-program."""

    def __init__(self, skeleton: Program, prefix: str, taken: set[str], target: Any, args: Any, kwargs: Any,
                 path: str):
        self.skeleton, self.prefix, self.taken = skeleton, prefix, taken
        self.target, self.args, self.kwargs, self.path = target, args, kwargs, path
        self.notes: list[str] = []

    def __call__(self, program: Program) -> list[str]:
        from solar_assets.ir import check_program

        problems = self.interface_problems(program)
        if problems:
            return problems
        try:
            check_program(program, self.path)
        except IRError as e:
            return [f"IR check: {e}"]
        return self.numeric_problems(program)

    def interface_problems(self, program: Program) -> list[str]:
        problems = []
        if program.inputs != self.skeleton.inputs or program.outputs != self.skeleton.outputs:
            problems.append(f"inputs must be {list(self.skeleton.inputs)} and outputs {list(self.skeleton.outputs)}, "
                            f"got {list(program.inputs)} and {list(program.outputs)}")
        given = self.skeleton.tensor_map()
        for t in program.tensors:
            if t.name in given:
                g = given[t.name]
                if (t.shape, t.dtype, t.role) != (g.shape, g.dtype, g.role):
                    problems.append(f"tensor {t.name!r} must be declared {g.role} {g.dtype}{list(g.shape)}, got "
                                    f"{t.role} {t.dtype}{list(t.shape)}")
            elif t.role in ("input", "weight", "output"):
                problems.append(f"tensor {t.name!r} is an extra {t.role}; only intermediates may be added")
            elif not t.name.startswith(self.prefix) or t.name in self.taken:
                problems.append(f"intermediate {t.name!r} must be named starting with {self.prefix!r} "
                                "and not clash with the program's tensors")
        return problems

    def numeric_problems(self, program: Program) -> list[str]:
        import torch

        from solar_assets.execute import execute_program
        from solar_assets.sizing import ValidationBudget, program_cost
        from solar_assets.translate.core.affine import SymTensor
        from solar_assets.validate import compare_outputs

        cost = program_cost(program)
        if not cost.within(ValidationBudget(NODE_CHECK_TENSOR_BYTES, NODE_CHECK_ITERATIONS)):
            self.notes.append(f"node not checked on its own ({cost}); the whole program is validated")
            return []
        gen = torch.Generator().manual_seed(0)
        values: dict[str, torch.Tensor] = {}

        def random(x: SymTensor) -> torch.Tensor:
            if x.base not in values:
                dtype = getattr(torch, IR_TO_TORCH_DTYPE[x.dtype])
                if dtype.is_floating_point:
                    values[x.base] = torch.randn(x.shape, generator=gen).to(dtype)
                elif dtype == torch.bool:
                    values[x.base] = torch.rand(x.shape, generator=gen) > 0.5
                else:
                    values[x.base] = torch.randint(0, 4, x.shape, generator=gen).to(dtype)
            return values[x.base]

        try:
            with torch.no_grad():
                ref = self.target(*_map(self.args, random), **_map(self.kwargs, random))
        except Exception as e:  # the op itself would not run on random inputs: rely on the whole program
            self.notes.append(f"node not checked on its own: the ATen op failed on random inputs: {e}")
            return []
        refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
        bindings = {f"input:{i}": values[name].numpy() if name in values else np.zeros(program.tensor(name).shape)
                    for i, name in enumerate(program.inputs)}
        try:
            got = execute_program(program, bindings, np.float64, source=self.path)
        except Exception as e:  # the reply's IR broke the executor: feedback for the next attempt
            return [f"running the steps on random inputs failed: {type(e).__name__}: {str(e).strip()}"]
        declared = [program.tensor(n).dtype for n in program.outputs]
        checks = compare_outputs(list(program.outputs), got, [r.double().numpy() if r.dtype.is_floating_point
                                                               else r.numpy() for r in refs], dtypes=declared)
        return [f"validation against {self.target} on random inputs: {c.message}" for c in checks if not c.ok]


def splice(b: Any, program: Program, skeleton: Program, path: str) -> None:
    """Add the sub-program's intermediates and steps to the builder (its inputs and outputs are
    already there); step names are made unique, tensor names were checked unique."""
    given = skeleton.tensor_map()
    for t in program.tensors:
        if t.name in given:
            if t.pad_value is not None:  # an input the steps read out of range: declare its pad value
                decl = b.decls[t.name]
                if decl.pad_value not in (None, t.pad_value):
                    raise TranslationError(f"{path}: the agent's steps need pad value {t.pad_value} on {t.name!r}, "
                                           f"which already pads with {decl.pad_value}")
                decl.pad_value = t.pad_value
            continue
        name = b.declare(t.name, t.shape, t.dtype).base
        if name != t.name:
            raise TranslationError(f"{path}: the agent's intermediate {t.name!r} clashes with a tensor of the program")
        b.decls[name].pad_value = t.pad_value
    for step in program.steps:
        b.steps.append(step.model_copy(update={"name": b.fresh(step.name, "step")}))
