"""PyTorch's ``scan`` higher-order op as one ``Repeat`` step (the IR's static loop), as JAX's ``scan``.

The node is ``scan(combine_graph, init, xs, additional_inputs)``: the body is an fx graph of one
step, called with the carries, the step's slice of every ``xs`` (dim 0) and the loop-invariant
additional inputs, returning the next carries and the step's ``ys`` rows. Autograd's backward of a
scan is another scan (the steps in reverse, its body the joint graph of one step), so a recurrent
net's training step lowers as two Repeats per layer instead of thousands of unrolled steps
(``workloads.recurrent_scan``).

What the body's graph holds that is not the computation's is not lowered as work: its ``clone``s
(a higher-order op's body may not return an alias of an input, so the tracer copies every output
that is a view) read their source, since the Repeat's own copies into the carries and the ``ys``
rows already give each result its own storage; and a ``ys`` row that is the same tensor at every
step (the partitioner saves a weight per step for the backward) is a broadcast view of that tensor,
not ``T`` copies of it.
"""
from __future__ import annotations

from typing import Any

import torch

from solar_assets.translate.core.affine import Lin, SymTensor, view_dim
from solar_assets.translate.core.builder import lins, loop_vars
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import find_lowering, lowers

aten = torch.ops.aten
PASS_THROUGH = {aten.clone.default, aten.alias.default, aten.detach.default}
"""Body ops whose value is their source's (module docstring)."""


def _submodule(owner: Any, target: str) -> Any:
    for part in target.split("."):
        owner = getattr(owner, part)
    return owner


def _resolve(arg: Any, env: dict[str, Any]) -> Any:
    if isinstance(arg, torch.fx.Node):
        return env[arg.name]
    if isinstance(arg, (list, tuple)):
        return type(arg)(_resolve(a, env) for a in arg)
    return arg


def lower_body(c: Ctx, graph_module: Any, args: list[Any]) -> list[Any]:
    """The values of ``graph_module``'s outputs with its placeholders bound to ``args``, its ops
    lowered into the builder's current steps (inside the caller's Repeat)."""
    from solar_assets.translate.torch_tracer import node_origin

    env: dict[str, Any] = {}
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(args):
        raise LoweringGap(f"a scan body of {len(placeholders)} inputs called with {len(args)}")
    for node, value in zip(placeholders, args):
        env[node.name] = value
    outer = node_origin(c.node)
    for node in graph_module.graph.nodes:
        if node.op == "get_attr":
            env[node.name] = _submodule(graph_module, node.target)
        elif node.op == "call_function":
            if node.target in PASS_THROUGH:
                env[node.name] = env[node.args[0].name]
                continue
            lowering = find_lowering(node.target)
            if lowering is None:
                raise LoweringGap(f"no lowering for {node.target} inside a scan body")
            start = len(c.b.steps)
            env[node.name] = lowering(Ctx(c.b, node), *_resolve(node.args, env), **_resolve(node.kwargs, env))
            c.b.tag_origin(start, outer.model_copy(update={"op": str(node.target)}))
        elif node.op == "output":
            return list(_resolve(node.args[0], env))
    raise LoweringGap("a scan body without an output")


def _copy(c: Ctx, dst: SymTensor, src: Any, hint: str, lead: list[Lin] | None = None) -> None:
    """``dst[lead..., i...] = src[i...]`` over ``dst``'s shape without ``lead``."""
    lead = lead or []
    shape = dst.shape[len(lead):]
    v = loop_vars("i", len(shape))
    c.b.kernel(hint, list(zip(v, shape)), dst.access(lead + lins(v)), "=", c.read(src, lins(v), shape))


def _step_view(x: SymTensor, step: Lin) -> SymTensor:
    """Row ``step`` of a scanned-over tensor: a view without its leading dim."""
    return x.reindex(x.shape[1:], [step] + [Lin.of(view_dim(d - 1)) for d in range(1, len(x.shape))])


def _every_step(y: SymTensor, length: int) -> SymTensor:
    """``y`` as the (length, *y.shape) tensor whose every row is ``y`` (a broadcast view)."""
    return y.reindex((length, *y.shape), [Lin.of(view_dim(d + 1)) for d in range(len(y.shape))])


def _reads_step(y: SymTensor, var: str) -> bool:
    return any(name == var for lin in y.index for name, _ in lin.coefs)


@lowers(torch.ops.higher_order.scan)
def scan_lowering(c: Ctx, combine: Any, init: Any, xs: Any, additional_inputs: Any = ()) -> tuple[Any, ...]:
    init, xs, extra = list(init), list(xs), list(additional_inputs)
    if not xs:
        raise LoweringGap("a scan over no input")
    if not all(isinstance(x, SymTensor) for x in init + xs):
        raise LoweringGap("a scan whose carries or inputs are not tensors")
    length = xs[0].shape[0]
    before = set(c.b.decls)
    states = []
    for k, x in enumerate(init):
        state = c.b.declare(f"{c.name}_carry{k}", c.out_shape(k), c.out_dtype(k))
        _copy(c, state, x, f"{c.name}_carry{k}_init")
        states.append(state)
    state_bases = {s.base for s in states}
    n_ys = len(c.meta()) - len(init)
    ys: list[Any] = [None] * n_ys
    var = c.b.fresh(f"t_{c.name}", "step")
    with c.b.repeat(c.name, var, length):
        step = Lin.of(var)
        outs = lower_body(c, combine, states + [_step_view(x, step) for x in xs] + extra)
        carries, rows = outs[:len(init)], outs[len(init):]
        for n, y in enumerate(rows):
            if not isinstance(y, SymTensor):
                raise LoweringGap(f"scan output row {n} is not a tensor")
            if y.base in before and y.base not in state_bases and not _reads_step(y, var):  # the same at every step
                ys[n] = _every_step(y, length)
                continue
            ys[n] = c.b.declare(f"{c.name}_ys{n}", c.out_shape(len(init) + n), c.out_dtype(len(init) + n))
            _copy(c, ys[n], y, f"{c.name}_ys{n}", [step])
        new = []
        for k, x in enumerate(carries):  # a next carry that reads a state is copied out before any is written
            if isinstance(x, SymTensor) and x.base in state_bases and x != states[k]:
                x = c.b.materialize(x, f"{c.name}_next{k}", force=True)
            new.append(x)
        for k, (state, x) in enumerate(zip(states, new)):
            if x != state:
                _copy(c, state, x, f"{c.name}_carry{k}_next")
    return (*states, *ys)
