"""The deterministic PyTorch translator: torch.export's ATen graph, lowered op by op.

Every call_function node must find a lowering; a miss names the op and the file and
stops the translation (an op that is not lowered is never counted as zero).
"""
from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

from solar_assets.translate.torch_lowering.inplace import SliceUpdate, exclusive_feeders, packet_name, slice_update
from solar_assets.translate.torch_lowering.masks import masked_attention, restrict_contraction
from solar_assets.errors import SolarError
from solar_assets.stage_clock import clocked
from solar_assets.logconf import fake_tensor_failures_quiet
from solar_assets.translate.core.complex import ComplexPair, has_complex
from solar_assets.translate.out_of_scope import export_reason_suffix, reason_suffix
from solar_assets.translate.torch_data_sizes import (
    MAX_SAMPLE_BYTES,
    DataSizes,
    data_dependent_sizes,
    has_data_dependent_sizes,
    sample_bytes,
)
from solar_assets.translate.torch_lowering import find_lowering
from solar_assets.translate.torch_lowering.complex_ops import COMPLEX_LOWERINGS
from solar_assets.translate.core.builder import OUTPUT_ORIGIN, ProgramBuilder
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap, ir_dtype
from solar_assets.translate.torch_lowering.context import resolve as _resolve
from solar_assets.translate.torch_origin import node_origin, op_name, user_call, user_line  # noqa: F401 - public here too
from solar_assets.translate.translation import Translation, TranslationError
from solar_assets.workloads import WorkloadSource, load_torch_workload
from solar_assets.workloads.torch_training import PHASE_KEY
from solar_assets.workloads.in_forward import (
    attributes_to_buffers, integer_bounds, normal_moments, random_kind, random_pattern_expr,
)

log = logging.getLogger(__name__)


def decomposition_table() -> dict[Any, Any]:
    """The core-ATen decompositions, less the recurrent ops: those are lowered whole (one Repeat
    over time, ``torch_lowering.recurrent``) instead of as thousands of unrolled steps; and less
    ``scaled_dot_product_attention``, whose decomposition is its math fallback (float32 upcasts,
    a materialised mask), not what its fused kernels compute (``torch_lowering.attention``)."""
    import torch

    aten = torch.ops.aten
    table = torch.export.default_decompositions()
    for op in (aten.lstm.input, aten.gru.input, aten.rnn_tanh.input, aten.rnn_relu.input):
        table.pop(op, None)
    table.pop(aten.scaled_dot_product_attention.default, None)  # lowered whole: torch_lowering.attention
    return table


def training_decompositions() -> dict[Any, Any]:
    """What a training step's joint graph is recorded with (``workloads.torch_training``): every
    core-ATen decomposition, attention and the recurrent ops included, so that autograd
    differentiates ops the lowerings know (their fused forms have backward kernels of their own)."""
    import torch

    table = torch.export.default_decompositions()
    table[torch.ops.aten.hardsigmoid_backward.default] = _hardsigmoid_backward
    return table


ATEN_ONE_SIXTH = 0.1666666716337204
"""``1.0f / 6.0f`` widened: ATen's hardsigmoid backward kernels (CPU and CUDA) multiply by this
float32 constant for every dtype, so its float64 run's gradient is 0.166666672, not 1/6."""


def _hardsigmoid_backward(grad_output: Any, self: Any) -> Any:
    """``aten.hardsigmoid_backward`` as ATen computes it (``torch._decomp``'s takes 1/6 in double,
    3e-8 from the framework's own float64 result: level 1's HardSigmoid step failed the 1e-9 check)."""
    import torch

    return torch.where((self > -3.0) & (self < 3.0), grad_output * ATEN_ONE_SIXTH, 0.0)


CHECKED_ONLY_META = "solar_checked_only"
"""An exported graph's ``meta`` entry: the positions of the returned values that are validated but
not results (``ir_schemas.Program.checked_only``: a training step's parameter gradients)."""


def drop_update_copies(ep: Any) -> Any:
    """A training step's graph without the copies its optimizer phase is traced with: torch.optim
    updates parameters and state in place, and the step runs it on copies (``clone``, then the
    functionalised write-back ``copy``) only so that the module's values stay as they were. Those
    copies are the tracer's, not the step's work: each is replaced by the value it copies (same
    shape and dtype; the graph is functional, so nothing else reads the copy's storage)."""
    import torch

    aten = torch.ops.aten
    graph = ep.graph_module.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or (node.meta.get("custom") or {}).get(PHASE_KEY) != "optimizer":
            continue
        source = node.args[0] if node.target == aten.clone.default else \
            node.args[1] if node.target == aten.copy.default else None
        if source is None or not _same_type(node, source):
            continue
        node.replace_all_uses_with(source)
        graph.erase_node(node)
    graph.lint()
    ep.graph_module.recompile()
    return ep


def _same_type(node: Any, source: Any) -> bool:
    a, b = node.meta.get("val"), getattr(source, "meta", {}).get("val")
    return a is not None and b is not None and tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


@clocked("export")
def export_graph(model: Any, inputs: list[Any], path: str) -> Any:
    """``torch.export`` then the core-ATen decompositions, in one trace (``export_speed.export_decomposed``;
    recurrent ops kept whole: exported as ``solar::`` ops, ``torch_lowering.recurrent.whole_recurrent_ops``)."""
    import torch

    from solar_assets.translate.export_speed import (export_decomposed, fast_cia_override,
                                                     materialise_when_registrations_change)
    from solar_assets.translate.torch_lowering.recurrent import whole_recurrent_ops

    from solar_assets.workloads.torch_training import TrainStep, trace_joint
    from solar_assets.workloads.training import NotDifferentiable

    materialise_when_registrations_change()  # torch's fixed costs per export (``export_speed``)
    fast_cia_override()
    try:
        with warnings.catch_warnings(), fake_tensor_failures_quiet(shown_when_verbose=True):
            warnings.simplefilter("ignore")
            if isinstance(model, TrainStep):  # autograd's joint graph first: export cannot trace autograd.grad
                trace_joint(model, inputs, training_decompositions())
                ep = drop_update_copies(torch.export.export(model, tuple(inputs)).run_decompositions(
                    decomposition_table()))
                ep.graph_module.meta[CHECKED_ONLY_META] = model.checked_only_outputs()
                return ep
            with whole_recurrent_ops():
                return export_decomposed(model, tuple(inputs), decomposition_table())
    except NotDifferentiable:
        raise  # the file has no step to export (its own message, one line)
    except Exception as e:
        raise TranslationError(f"{path}: torch.export failed: {type(e).__name__}: {str(e).splitlines()[0]}"
                               + export_reason_suffix(type(e).__name__)) from e


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
                env[node.name] = scalar_input(val, user_index)
                user_index += 1
                continue
            env[node.name] = b.declare(node.name, val.shape, ir_dtype(val.dtype), "input", f"input:{user_index}")
            user_index += 1
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            kind = "param" if spec.kind == InputKind.PARAMETER else "buffer"
            env[node.name] = b.declare(node.name, val.shape, ir_dtype(val.dtype), "weight", f"{kind}:{spec.target}")
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            env[node.name] = lifted_constant(b, node, ep.constants.get(spec.target), spec.target)
        elif spec.kind == InputKind.TOKEN:  # orders effectful ops (linalg's error checks): no data
            from solar_assets.translate.torch_lowering.factorizations import EFFECT_TOKEN

            env[node.name] = EFFECT_TOKEN
        else:
            raise TranslationError(f"graph input {node.name!r} of kind {spec.kind.name} is not supported")
    return env


def value_map(env: dict[str, Any], b: ProgramBuilder) -> dict[str, str]:
    """IR tensor name -> the fx node whose whole value it holds (placeholders included; the first
    node wins where several alias one tensor, the last where several in-place updates write one
    storage in turn, so the tensor maps to its final value): what node-wise validation binds
    framework values to."""
    values: dict[str, str] = {}
    for node_name, val in env.items():
        decl = b.decls.get(getattr(val, "base", None)) if hasattr(val, "is_whole") else None
        if decl is not None and val.is_whole(decl.shape):
            if val.base in b.in_place_tensors:
                values[val.base] = node_name
            else:
                values.setdefault(val.base, node_name)
    return values


def lower_exported(ep: Any, name: str, path: str, fallback: Any = None, values: dict[str, str] | None = None,
                   data_sizes: dict[str, int] | None = None) -> Any:
    """Walk the exported graph in order and build the Program. ``fallback(builder, node, args,
    kwargs)``, when given, lowers a node that has no lowering or hits a LoweringGap (auto mode:
    ``solar_assets.agent.node.NodeFallback``) and returns the node's value. ``values``,
    when given, receives ``value_map`` (IR tensor -> fx node). ``data_sizes``: the values of the
    sizes the sample's values decide (``torch_data_sizes``)."""
    from torch.export.graph_signature import OutputKind

    b = ProgramBuilder(name)
    b.data_sizes.update(data_sizes or {})
    try:
        env = _bind_placeholders(ep, b)
    except (TranslationError, LoweringGap) as e:
        raise TranslationError(f"{path}: {e}") from None
    updates = in_place_updates(ep, env, b)
    slices = {u.node: u for u in updates.slices}
    masked = {m.node: m for m in masked_attention(ep.graph)}
    for node in ep.graph.nodes:
        if node.op == "get_attr":  # a higher-order op's body (``torch_lowering.control``)
            env[node.name] = ep.graph_module.get_submodule(node.target)
            continue
        if node.op != "call_function":
            continue
        if node.name in updates.skipped:
            env[node.name] = None  # dead once the update is lowered as the slice it writes
            continue
        start = len(b.steps)
        if node.name in slices:
            env[node.name] = lower_slice_update(Ctx(b, node), _resolve(slices[node.name].value, env),
                                                slices[node.name].condition)
            b.tag_origin(start, node_origin(node))
            continue
        lowering = find_lowering(node.target) or model_tensor_lowering(node.target)
        if lowering is None and has_complex([_resolve(node.args, env)]):
            lowering = COMPLEX_LOWERINGS.get(getattr(node.target, "overloadpacket", None))
        if lowering is None and fallback is not None:
            env[node.name] = fallback(b, node, _resolve(node.args, env), _resolve(node.kwargs, env))
            b.tag_origin(start, node_origin(node))
            continue
        if lowering is None:
            raise TranslationError(f"{path}: no lowering for {node.target} (node {node.name}: {node.format_node()})"
                                   + reason_suffix(op_name(node.target)))
        n_steps, decls = len(b.steps), set(b.decls)
        try:
            ctx = Ctx(b, node, in_place_of=updates.storage_of.get(node.name))
            args, kwargs = _resolve(node.args, env), _resolve(node.kwargs, env)
            if has_complex([args, list(kwargs.values())]) and not getattr(lowering, "complex_aware", False):
                lowering = COMPLEX_LOWERINGS.get(getattr(node.target, "overloadpacket", None))
                if lowering is None:
                    raise LoweringGap(f"{op_name(node.target)} of complex operands")
            env[node.name] = lowering(ctx, *args, **kwargs)
        except SolarError:
            raise
        except LoweringGap as e:
            if fallback is None:
                raise TranslationError(f"{path}: cannot lower {node.target} at node {node.name}: {e}") from None
            del b.steps[n_steps:]  # drop what the lowering emitted before it gave up
            for extra in set(b.decls) - decls:
                del b.decls[extra]
            env[node.name] = fallback(b, node, _resolve(node.args, env), _resolve(node.kwargs, env))
        except Exception as e:
            raise TranslationError(
                f"{path}: while lowering {node.format_node()}: {type(e).__name__}: {e}"
            ) from e
        if node.name in masked and not restrict_contraction(b.steps, start, masked[node.name]):
            log.debug("%s: the mask on %s does not fit its kernel's subscripts: every product counted", path, node.name)
        b.tag_origin(start, node_origin(updates.grouped.get(node.name, node)))
    output = next(n for n in ep.graph.nodes if n.op == "output")
    start = len(b.steps)
    _check_returns(output.args[0], path)
    pairs = list(zip(ep.graph_signature.output_specs, output.args[0]))
    for spec, arg in pairs:
        if spec.kind not in (OutputKind.USER_OUTPUT, OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION,
                             OutputKind.TOKEN):
            raise TranslationError(f"{path}: output {spec.arg.name} of kind {spec.kind.name} is not supported")
    for spec, arg in pairs:  # in-place updates first: each claims the value it is (IN_PLACE_UPDATES)
        if spec.kind not in (OutputKind.USER_OUTPUT, OutputKind.TOKEN):
            target = updates.targets[spec.arg.name]
            unchanged = env[arg.name] is not None and getattr(env[arg.name], "base", None) == \
                updates.storage_of.get(arg.name)  # the tensor itself: nothing written
            b.set_output(env[arg.name], "updated_" + target.split(":")[-1].replace(".", "_"),
                         view=unchanged, updates=target)
    checked = set(ep.graph_module.meta.get(CHECKED_ONLY_META, ()))
    user_outputs = [arg for spec, arg in pairs if spec.kind == OutputKind.USER_OUTPUT]
    for index, arg in enumerate(user_outputs):  # returning an updated tensor returns its storage
        value = env[arg.name]
        for plane in ((value.re, value.im) if isinstance(value, ComplexPair) else (value,)):
            b.set_output(plane, f"out_{len(b.outputs)}", view=returns_alias(arg) or arg.name in updates.values)
            if index in checked:
                b.checked_only.append(b.outputs[-1])
    b.tag_origin(start, OUTPUT_ORIGIN)
    if values is not None:
        values.update(value_map(env, b))
    return b.build()


def returns_alias(node: Any) -> bool:
    """Whether eager PyTorch returns this graph value as an alias of another tensor, moving no data:
    a graph input itself, or the result of an op whose schema marks its return as an alias of an
    argument (``permute(Tensor(a) self) -> Tensor(a)``: transpose, slicing, expand, unfold,
    diagonal, as_strided…); an item of such an op's list (``split``) likewise. ``flip`` or
    ``clone`` return new tensors."""
    import operator

    if node.op == "placeholder":
        return True
    if node.op != "call_function":
        return False
    target = node.target
    if target is operator.getitem:
        return returns_alias(node.args[0])
    schema = getattr(target, "_schema", None)
    if schema is None or not schema.returns:
        return False
    info = schema.returns[0].alias_info
    return info is not None and not info.is_write


def _check_returns(results: Any, path: str) -> None:
    """Every value ``forward`` returns is a tensor; else one line naming the file and the type."""
    import torch
    import torch.fx

    items = list(results) if isinstance(results, (tuple, list)) else [results]
    for arg in items or [results]:
        val = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else arg
        if not isinstance(val, torch.Tensor):
            raise TranslationError(f"{path}: forward returned {type(val).__name__}; a workload returns a tensor or "
                                   f"a tuple of tensors")


# ---------------------------------------------------------------------------- tensors made by the model
MAX_LIFTED_ELEMENTS = 64  # entries of a constant made in forward with no simpler structure (a table in the IR)

# IN_PLACE_UPDATES: an input or buffer that ``forward`` updates in place (``x.mul_(2)``, ``self.cache[:, p] =
# k``, BatchNorm's running statistics in train mode, ``self.hidden = ...`` on a tensor attribute made a
# buffer by ``attributes_to_buffers``) is an extra graph output of kind USER_INPUT_MUTATION or
# BUFFER_MUTATION. Each becomes an IR output bound ``updates:<the tensor's binding>``
# (``solar_assets.ir.updates``), validated against the tensor's value after eager's call; the IR
# reads the values from before the call, as the golden run records them. An update that writes a
# known slice is lowered as that slice (``torch_lowering.inplace``), so it moves what eager moves.


@dataclass
class InPlaceUpdates:
    """What the exported graph updates in place, found before lowering."""

    targets: dict[str, str]  # fx name of each mutation output's value -> the binding it updates
    values: set[str]  # fx names whose value is an updated tensor's storage
    slices: list[SliceUpdate]  # updates lowered as the slice they write
    skipped: set[str]  # fx nodes with nothing left to lower (a slice's condition, a copy's destination)
    grouped: dict[str, Any]  # fx name -> the update node whose op it is part of (one eager op)
    storage_of: dict[str, str] = field(default_factory=dict)  # fx name of an update's value -> IR tensor updated


def in_place_updates(ep: Any, env: dict[str, Any], b: ProgramBuilder) -> InPlaceUpdates:
    """The in-place updates of ``ep`` (IN_PLACE_UPDATES)."""
    from torch.export.graph_signature import OutputKind

    output = next(n for n in ep.graph.nodes if n.op == "output")
    nodes = {n.name: n for n in ep.graph.nodes}
    found = InPlaceUpdates({}, set(), [], set(), {})
    for spec, arg in zip(ep.graph_signature.output_specs, output.args[0]):
        if spec.kind == OutputKind.BUFFER_MUTATION:
            binding = f"buffer:{spec.target}"
            placeholder = next((s.arg.name for s in ep.graph_signature.input_specs if s.target == spec.target), None)
        elif spec.kind == OutputKind.USER_INPUT_MUTATION:
            placeholder = spec.target
            binding = b.decls[env[placeholder].base].binding
        else:
            continue
        found.targets[spec.arg.name] = binding
        found.values.add(arg.name)
        if placeholder is not None and placeholder in env and hasattr(env[placeholder], "base"):
            for link in update_chain(arg, placeholder):
                found.storage_of[link] = env[placeholder].base
        upd = slice_update(arg, placeholder) if placeholder is not None else None
        if upd is not None:
            found.slices.append(upd)
            found.skipped |= upd.predicate_nodes
            line = _source_line(arg)
            for name in exclusive_feeders(upd.value, arg) if line else ():
                if _source_line(nodes[name]) == line:
                    found.grouped[name] = arg
    copy_dst = [n for n in ep.graph.nodes if n.op == "call_function" and _is_copy(n)]
    for n in ep.graph.nodes:  # a view made only to be overwritten by aten.copy (``copy`` does not read it)
        if n.op == "call_function" and n.users and all(u in copy_dst and u.args[0] is n and n not in u.args[1:]
                                                       for u in n.users):
            found.skipped.add(n.name)
    return found


SCATTERS = ("slice_scatter", "select_scatter", "index_put", "scatter", "scatter_add")
"""Ops whose value is their first argument with some places overwritten (``_copy_of`` in the lowerings)."""


def update_chain(value: Any, placeholder: str) -> list[str]:
    """The fx names of the scatters that build ``value`` from the placeholder ``placeholder``, each
    overwriting places of the previous one (``x[:, ::2] *= 2`` exports as two), when every other
    use of each link comes before the next link, so all of them can write the placeholder's
    storage in turn, as eager's in-place ops do; [] when ``value`` is not built so."""
    import torch.fx

    order = {n.name: i for i, n in enumerate(value.graph.nodes)}
    chain, node = [], value
    while isinstance(node, torch.fx.Node) and node.op == "call_function" and packet_name(node) in SCATTERS:
        chain.append(node.name)
        base = node.args[0]
        if isinstance(base, torch.fx.Node) and base.name == placeholder:
            return chain
        if not isinstance(base, torch.fx.Node) or any(order[u.name] > order[node.name] for u in base.users):
            return []
        node = base
    return []


def _is_copy(node: Any) -> bool:
    return packet_name(node) == "copy"


def _source_line(node: Any) -> str:
    """The innermost line of user code that made ``node`` ('' when unrecorded)."""
    trace = node.meta.get("stack_trace") or ""
    lines = [ln.strip() for ln in trace.strip().splitlines() if ln.strip().startswith("File ")]
    return lines[-1] if lines else ""


def lower_slice_update(c: Ctx, value: Any, condition: str) -> Any:
    """One kernel writing ``value`` (broadcast) where ``condition`` holds, nothing elsewhere."""
    from solar_assets.translate.core.builder import lins, loop_vars

    shape = c.out_shape()
    out = c.new_output()
    v = loop_vars("i", len(shape))
    idx = lins(v)
    c.b.kernel(c.name, list(zip(v, shape)), out.access(idx), "=", c.read(value, idx, shape), where=condition)
    return out


def scalar_input(value: Any, index: int) -> Any:
    """A Python scalar among ``get_inputs()`` (``[A, 3.14]``): torch.export specialises it into the
    graph (the ops read the number itself), so it becomes a constant of the IR, not an IR input."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise TranslationError(f"input {index} is neither a tensor nor a Python scalar ({type(value).__name__})")


def lifted_constant(b: ProgramBuilder, node: Any, value: Any, target: str) -> Any:
    """A tensor constant made inside ``forward`` (``torch.tensor(0.5)``, ``torch.tensor([1., 2.])``, an
    index table built with NumPy), lifted by torch.export into a graph input of kind CONSTANT_TENSOR:
    one kernel that writes its values, by their structure (``in_forward.constant_template``: a literal
    along the axes it does not vary, an affine form, or a table of at most ``MAX_LIFTED_ELEMENTS``
    entries). Its values are real even when tracing on fake tensors."""
    from torch._subclasses.fake_tensor import FakeTensor

    from solar_assets.workloads.in_forward import constant_template

    template = None
    if value is not None and not isinstance(value, FakeTensor):
        values = value.detach().cpu()
        if values.dtype.is_floating_point and values.dtype.itemsize < 4:
            values = values.float()  # bf16 / fp16: NumPy has no bf16 (the widening is exact)
        c = Ctx(b, node)
        loops = [f"i{i}" for i in range(len(c.out_shape()))]
        template = constant_template(values.numpy(), loops, MAX_LIFTED_ELEMENTS)
    if template is None:
        size = "unknown" if value is None else f"{value.numel()} elements"
        raise TranslationError(f"the constant tensor {target!r} ({size}) made in forward cannot be written into "
                               f"the IR (its values must be known and be uniform along all but some axes, affine "
                               f"in the indices, or at most {MAX_LIFTED_ELEMENTS} entries); make it a buffer "
                               "(self.register_buffer) in __init__")
    return c.elementwise(template.replace("{", "{{").replace("}", "}}"))


def _copy_lowering(c: Ctx, dst: Any, src: Any, non_blocking: bool = False) -> Any:
    """``aten.copy(dst, src)``, the functional form of ``dst.copy_(src)`` (a state tensor overwritten
    in ``forward``): ``src`` broadcast to ``dst``'s shape, in ``dst``'s dtype; ``dst`` is not read."""
    return c.elementwise("{0}", src)


def _bernoulli_lowering(c: Ctx, x: Any, p: Any = 0.5, generator: Any = None) -> Any:
    """``bernoulli(x, p)``: 1 where the uniform pattern of ``in_forward`` is below ``p`` (a float;
    ``deterministic_random`` draws the eager one so), else 0; ``x`` only gives the shape."""
    if not isinstance(p, (int, float)):
        raise LoweringGap("bernoulli with a tensor of probabilities")
    shape = c.out_shape()
    u = random_pattern_expr("uniform", [f"i{i}" for i in range(len(shape))], shape)
    return c.elementwise(f"select(({u}) < {float(p)!r}, 1.0, 0.0)")


def model_tensor_lowering(target: Any) -> Any:
    """The lowering of an op that makes or overwrites a model's own tensor, which the op lowerings do not
    cover: a random draw inside ``forward`` (``aten.randn`` / ``rand`` / ``_like``) is one kernel writing
    the fixed pattern of ``solar_assets.workloads.in_forward`` that the golden run uses too, reading
    nothing; ``aten.copy`` is ``_copy_lowering``; None for any other op."""
    packet = getattr(target, "overloadpacket", None)
    name = getattr(packet, "__name__", "")
    if name == "copy":
        return _copy_lowering
    if name == "bernoulli":  # training-mode dropout's mask: ``pattern < p``, as the golden run draws it
        return _bernoulli_lowering
    kind = random_kind(name)
    if kind is None:
        return None

    def lower(c: Ctx, *args: Any, **kwargs: Any) -> Any:
        shape = c.out_shape()
        loop = [f"i{i}" for i in range(len(shape))]
        if kind == "integer":
            low, high = integer_bounds(name, args)
            u = random_pattern_expr("uniform", loop, shape)
            return c.elementwise(f"floor({{0}} + ({{1}} - {{0}}) * ({u}))", low, high)
        if kind == "scaled_normal":
            mean, std = normal_moments(args, kwargs)
            return c.elementwise(f"{{0}} + {{1}} * ({random_pattern_expr('normal', loop, shape)})", mean, std)
        return c.elementwise(random_pattern_expr(kind, loop, shape))

    return lower


REAL_TENSOR_NOTE = "traced with real tensors: building or exporting the model with fake tensors failed"


def load_and_export(src: WorkloadSource, constants: dict[str, int] | None = None) -> tuple[Any, bool]:
    """The file's exported (decomposed) graph, at its own size or with ``constants`` rebound, and
    whether it was traced on fake tensors.

    Fake tensors first (``load_torch_workload(fake=True)``): shapes and dtypes only, so a
    full-size trace costs no FLOPs and allocates nothing, whatever the file's sizes. A file whose
    construction or export needs real values (a number read from a tensor in ``__init__``) is
    loaded and exported again with real tensors."""
    try:
        w = load_torch_workload(src, constants, fake=True)
        attributes_to_buffers(w.model)
        return export_graph(w.model, w.inputs, src.path), True
    except SolarError as e:
        log.info("%s: %s; tracing with real tensors", src.path, str(e).splitlines()[0])
    w = load_torch_workload(src, constants)
    attributes_to_buffers(w.model)
    return export_graph(w.model, w.inputs, src.path), False


def trace_torch(src: WorkloadSource, constants: dict[str, int] | None = None, fallback: Any = None) -> Translation:
    """Translate a PyTorch workload file into a checked Affine Loop IR program (``fallback``: see
    ``lower_exported``). Traced on fake tensors where the file allows (``load_and_export``)."""
    from solar_assets.ir import check_program

    start = time.perf_counter()
    ep, fake = load_and_export(src, constants)
    data = None
    if has_data_dependent_sizes(ep):
        ep, data = export_at_sample_values(src, constants)
        fake = True  # traced for its sizes: the note says so, not the real-tensor one
    values: dict[str, str] = {}
    program = lower_exported(ep, src.name, src.path, fallback, values=values, data_sizes=data.sizes if data else None)
    check_program(program, src.path)
    if fake and data is None and fallback is None:  # node-wise validation runs this graph on real values
        from solar_assets.translate import export_memo

        export_memo.remember(src.path, src.sha256, constants, ep, program, values)
    seconds = time.perf_counter() - start
    log.info("traced %s: %d steps in %.2fs (%s tensors)", src.name, len(program.steps), seconds,
             "fake" if fake else "real")
    notes = (() if fake else (REAL_TENSOR_NOTE,)) + ((data.note(),) if data and data.sizes else ())
    return Translation(program=program, translator="tracer", source_sha256=src.sha256, seconds=seconds,
                       diagnostics=notes)


def export_at_sample_values(src: WorkloadSource, constants: dict[str, int] | None = None) -> tuple[Any, DataSizes]:
    """The file exported with its real, seeded sample, and the sizes its values decide at that
    sample (``torch_data_sizes``)."""
    w = load_torch_workload(src, constants)
    attributes_to_buffers(w.model)
    if sample_bytes(w.model, w.inputs) > MAX_SAMPLE_BYTES:
        raise TranslationError(f"{src.path}: its shapes depend on its values, and its sample of "
                               f"{sample_bytes(w.model, w.inputs) / 2**30:.1f} GiB is over the "
                               f"{MAX_SAMPLE_BYTES >> 30} GiB run for them")
    ep = export_graph(w.model, w.inputs, src.path)
    return ep, data_dependent_sizes(ep, w.inputs, src.path)
