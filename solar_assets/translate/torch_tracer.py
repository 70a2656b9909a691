"""The deterministic PyTorch translator: torch.export's ATen graph, lowered op by op.

Every call_function node must find a lowering; a miss names the op and the file and
stops the translation (an op that is not lowered is never counted as zero).
"""
from __future__ import annotations

import logging
import time
import warnings
from typing import Any

from solar_assets.errors import SolarError
from solar_assets.translate.torch_lowering import find_lowering
from solar_assets.translate.torch_lowering.builder import ProgramBuilder
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap, ir_dtype
from solar_assets.translate.translation import Translation, TranslationError
from solar_assets.workloads import WorkloadSource, load_torch_workload

log = logging.getLogger(__name__)


def export_graph(model: Any, inputs: list[Any], path: str) -> Any:
    """``torch.export`` then the core-ATen decompositions."""
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.export.export(model, tuple(inputs)).run_decompositions()
    except Exception as e:
        raise TranslationError(f"{path}: torch.export failed: {type(e).__name__}: {str(e).splitlines()[0]}") from e


def _bind_placeholders(ep: Any, b: ProgramBuilder) -> dict[str, Any]:
    from torch.export.graph_signature import InputKind

    env: dict[str, Any] = {}
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    user_index = 0
    for spec in ep.graph_signature.input_specs:
        node = nodes[spec.arg.name]
        val = node.meta.get("val")
        if spec.kind == InputKind.USER_INPUT:
            if not hasattr(val, "shape"):
                raise TranslationError(f"input {user_index} is not a tensor ({type(val).__name__})")
            env[node.name] = b.declare(node.name, val.shape, ir_dtype(val.dtype), "input", f"input:{user_index}")
            user_index += 1
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            kind = "param" if spec.kind == InputKind.PARAMETER else "buffer"
            env[node.name] = b.declare(node.name, val.shape, ir_dtype(val.dtype), "weight", f"{kind}:{spec.target}")
        else:
            raise TranslationError(f"graph input {node.name!r} of kind {spec.kind.name} is not supported")
    return env


def _resolve(arg: Any, env: dict[str, Any]) -> Any:
    import torch.fx

    if isinstance(arg, torch.fx.Node):
        return env[arg.name]
    if isinstance(arg, (list, tuple)):
        return type(arg)(_resolve(a, env) for a in arg)
    return arg


def lower_exported(ep: Any, name: str, path: str) -> Any:
    """Walk the exported graph in order and build the Program."""
    from torch.export.graph_signature import OutputKind

    b = ProgramBuilder(name)
    try:
        env = _bind_placeholders(ep, b)
    except (TranslationError, LoweringGap) as e:
        raise TranslationError(f"{path}: {e}") from None
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        lowering = find_lowering(node.target)
        if lowering is None:
            raise TranslationError(f"{path}: no lowering for {node.target} (node {node.name}: {node.format_node()})")
        try:
            env[node.name] = lowering(Ctx(b, node), *_resolve(node.args, env), **_resolve(node.kwargs, env))
        except SolarError:
            raise
        except LoweringGap as e:
            raise TranslationError(f"{path}: cannot lower {node.target} at node {node.name}: {e}") from None
        except Exception as e:
            raise TranslationError(
                f"{path}: while lowering {node.format_node()}: {type(e).__name__}: {e}"
            ) from e
    output = next(n for n in ep.graph.nodes if n.op == "output")
    for spec, arg in zip(ep.graph_signature.output_specs, output.args[0]):
        if spec.kind != OutputKind.USER_OUTPUT:
            raise TranslationError(f"{path}: output {spec.arg.name} of kind {spec.kind.name} (e.g. a buffer mutation) is not supported")
        b.set_output(env[arg.name], f"out_{len(b.outputs)}")
    return b.build()


def trace_torch(src: WorkloadSource, constants: dict[str, int] | None = None) -> Translation:
    """Translate a PyTorch workload file into a checked Affine Loop IR program."""
    from solar_assets.ir import check_program

    start = time.perf_counter()
    w = load_torch_workload(src, constants)
    ep = export_graph(w.model, w.inputs, src.path)
    program = lower_exported(ep, src.name, src.path)
    check_program(program, src.path)
    seconds = time.perf_counter() - start
    log.info("traced %s: %d steps in %.2fs", src.name, len(program.steps), seconds)
    return Translation(program=program, translator="tracer", source_sha256=src.sha256, seconds=seconds)
