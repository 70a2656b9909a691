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

from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.views import copy_at, every_step, step_view
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap, resolve as _resolve
from solar_assets.translate.torch_lowering.registry import find_lowering, lowers
from solar_assets.translate.torch_origin import node_origin

aten = torch.ops.aten
PASS_THROUGH = {aten.clone.default, aten.alias.default, aten.detach.default}
"""Body ops whose value is their source's (module docstring)."""


def _needed(graph_module: Any, positions: set[int]) -> set[str]:
    """The names of the body's nodes that the outputs at ``positions`` depend on."""
    output = next(n for n in graph_module.graph.nodes if n.op == "output")
    todo = [a for i, a in enumerate(output.args[0]) if i in positions and isinstance(a, torch.fx.Node)]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        if node.name not in seen:
            seen.add(node.name)
            todo.extend(node.all_input_nodes)
    return seen


def _computes(graph_module: Any, names: set[str]) -> set[str]:
    """Those of ``names`` that are work: an op that is not a view or one of PASS_THROUGH."""
    work = set()
    for node in graph_module.graph.nodes:
        if node.name in names and node.op == "call_function" and node.target not in PASS_THROUGH:
            schema = getattr(node.target, "_schema", None)
            if not (schema and schema.returns and schema.returns[0].alias_info is not None):
                work.add(node.name)
    return work


def lower_body(c: Ctx, graph_module: Any, args: list[Any], only: set[int] | None = None) -> list[Any]:
    """The values of ``graph_module``'s outputs with its placeholders bound to ``args``, its ops
    lowered into the builder's current steps (inside the caller's Repeat); with ``only``, just the
    ops the outputs at those positions need (the others' values are None)."""
    env: dict[str, Any] = {}
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(args):
        raise LoweringGap(f"a scan body of {len(placeholders)} inputs called with {len(args)}")
    for node, value in zip(placeholders, args):
        env[node.name] = value
    needed = None if only is None else _needed(graph_module, only)
    outer = node_origin(c.node)
    for node in graph_module.graph.nodes:
        if needed is not None and node.op in ("get_attr", "call_function") and node.name not in needed:
            continue
        if node.op == "get_attr":
            env[node.name] = graph_module.get_submodule(node.target)
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
            return [_resolve(a, env) if only is None or i in only else None for i, a in enumerate(node.args[0])]
    raise LoweringGap("a scan body without an output")


def _reads_step(y: SymTensor, var: str) -> bool:
    return any(name == var for lin in y.index for name, _ in lin.coefs)


def _read_carries(c: Ctx, n_carry: int) -> set[int]:
    """The carries whose final value the graph reads after the loop (all, unless every use of the
    scan's result is a ``getitem``)."""
    import operator

    if any(u.target is not operator.getitem for u in c.node.users):
        return set(range(n_carry))
    return {u.args[1] for u in c.node.users if u.users and u.args[1] < n_carry}


@lowers(torch.ops.higher_order.scan)
def scan_lowering(c: Ctx, combine: Any, init: Any, xs: Any, additional_inputs: Any = ()) -> tuple[Any, ...]:
    """The loop as one Repeat. Where a carry's final value is never read (autograd's backward scan
    always makes the gradient of the initial state, which no one asks for when that state is a
    constant or an input without grad), the last step is peeled off and lowered without the work
    only that carry needs: ``T - 1`` steps in the Repeat, then one step less that work, so the IR
    counts no product a backward kernel (cuDNN's, given no ``dhx``) would skip."""
    init, xs, extra = list(init), list(xs), list(additional_inputs)
    if not xs:
        raise LoweringGap("a scan over no input")
    if not all(isinstance(x, SymTensor) for x in init + xs):
        raise LoweringGap("a scan whose carries or inputs are not tensors")
    length, n_carry = xs[0].shape[0], len(init)
    n_ys = len(c.meta()) - n_carry
    live = _read_carries(c, n_carry)
    every = set(range(n_carry + n_ys))
    last_needs = set(live) | set(range(n_carry, n_carry + n_ys))
    peel = length > 1 and len(live) < n_carry and \
        _computes(combine, _needed(combine, last_needs)) != _computes(combine, _needed(combine, every))
    before = set(c.b.decls)
    states = []
    for k, x in enumerate(init):
        state = c.b.declare(f"{c.name}_carry{k}", c.out_shape(k), c.out_dtype(k))
        copy_at(c, state, x, f"{c.name}_carry{k}_init")
        states.append(state)
    state_bases = {s.base for s in states}
    ys: list[Any] = [None] * n_ys
    invariant: set[int] = set()

    def iteration(step: Lin, var: str | None, only: set[int] | None) -> None:
        outs = lower_body(c, combine, states + [step_view(x, step) for x in xs] + extra, only)
        carries, rows = outs[:n_carry], outs[n_carry:]
        for n, y in enumerate(rows):
            if not isinstance(y, SymTensor):
                raise LoweringGap(f"scan output row {n} is not a tensor")
            if n in invariant:
                continue  # the loop's broadcast view covers the peeled row too
            if var is not None and y.base in before and y.base not in state_bases and not _reads_step(y, var):
                ys[n] = every_step(y, length)  # the same tensor at every step
                invariant.add(n)
                continue
            if ys[n] is None:
                ys[n] = c.b.declare(f"{c.name}_ys{n}", c.out_shape(n_carry + n), c.out_dtype(n_carry + n))
            copy_at(c, ys[n], y, f"{c.name}_ys{n}", [step])
        new = []
        for k, x in enumerate(carries):  # a next carry that reads a state is copied out before any is written
            if isinstance(x, SymTensor) and x.base in state_bases and x != states[k]:
                x = c.b.materialize(x, f"{c.name}_next{k}", force=True)
            new.append(x)
        for k, (state, x) in enumerate(zip(states, new)):
            if x is not None and x != state:
                copy_at(c, state, x, f"{c.name}_carry{k}_next")

    steps = length - 1 if peel else length
    var = c.b.fresh(f"t_{c.name}", "step")
    with c.b.repeat(c.name, var, steps):
        iteration(Lin.of(var), var, None)
    if peel:
        iteration(Lin.constant(length - 1), None, last_needs)
    return (*states, *ys)
