"""One forward pass at the file's own size, node by node, keeping only the values still needed.

Node-wise validation (``solar_assets.validate.nodewise``) checks each IR op group on the
framework's own values of that op's inputs and output. Holding every intermediate of a big
model at once would cost far more than the model's own run, so the pass runs the exported
graph under a ``torch.fx.Interpreter`` and frees each value after its last use, where a use is
an fx user or a caller-named *extra* use (the node at which a check that reads the value runs).
The graph's return is no use: the caller sees each returned value when it is made (node-wise
validation summarises it then), so a training step's gradients and updated parameters and
optimizer states are not all held to the pass's end.
The caller sees each node's value the moment it exists (``on_node``), with every value still
live, so memory stays at the program's own peak plus what pending checks hold.

Before running, ``estimate_capture`` sizes that peak from the exported graph's tensor metadata
(inputs, weights, and the largest sum of simultaneously live intermediates), so a workload too
big for one pass is refused with its sizes instead of exhausting memory.
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from solar_assets.errors import SolarError

log = logging.getLogger(__name__)

DEFAULT_CAPTURE_BYTES = 4 << 30  # one forward pass of at most 4 GiB of tensors
CAPTURE_BYTES_ENV = "SOLAR_NODEWISE_BYTES"


class CaptureTooBig(SolarError):
    """The forward pass would need more memory than the capture budget; the message has the sizes."""


@dataclass(frozen=True)
class CaptureEstimate:
    """Bytes one forward pass holds: graph inputs, weights, and the peak of live intermediates."""

    input_bytes: int
    weight_bytes: int
    peak_intermediate_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.input_bytes + self.weight_bytes + self.peak_intermediate_bytes

    def __str__(self) -> str:
        return (f"{gib(self.total_bytes)} (inputs {gib(self.input_bytes)}, weights {gib(self.weight_bytes)}, "
                f"peak of live intermediates {gib(self.peak_intermediate_bytes)})")


def gib(n: int) -> str:
    return f"{n / (1 << 30):.3g} GiB" if n >= 1 << 27 else f"{n / (1 << 20):.3g} MiB"


def capture_budget() -> int:
    """The capture budget in bytes: ``$SOLAR_NODEWISE_BYTES`` where set, else 4 GiB."""
    text = os.environ.get(CAPTURE_BYTES_ENV, "").strip()
    return int(float(text)) if text else DEFAULT_CAPTURE_BYTES


def _nbytes(val: Any) -> int:
    """Bytes of a node's value from its metadata (a tensor, or a tuple / list of them)."""
    if isinstance(val, (tuple, list)):
        return sum(_nbytes(v) for v in val)
    numel, itemsize = getattr(val, "numel", None), getattr(getattr(val, "dtype", None), "itemsize", None)
    if numel is None or itemsize is None:
        return 0
    try:
        return int(numel()) * int(itemsize)
    except (TypeError, ValueError, RuntimeError):  # a symbolic size: not sizable here
        return 0


def last_uses(graph: Any, extra: Mapping[str, int] | None = None) -> dict[str, int]:
    """Node name -> the position (in graph order) of the last node that needs its value: the last
    fx user other than the graph's return (module docstring), or a later position named in ``extra``."""
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    last = {n.name: max([order[u.name] for u in n.users if u.op != "output"] or [order[n.name]])
            for n in graph.nodes}
    for name, at in (extra or {}).items():
        if name in last:
            last[name] = max(last[name], at)
    return last


def estimate_capture(ep: Any, extra: Mapping[str, int] | None = None) -> CaptureEstimate:
    """The memory of one pass over ``ep``'s graph with values freed after their last use."""
    from torch.export.graph_signature import InputKind

    kinds = {s.arg.name: s.kind for s in ep.graph_signature.input_specs}
    inputs = weights = live = peak = 0
    last = last_uses(ep.graph, extra)
    sizes: dict[str, int] = {}
    dying: dict[int, list[str]] = {}
    for i, node in enumerate(ep.graph.nodes):
        size = _nbytes(node.meta.get("val"))
        if node.op == "placeholder":
            if kinds.get(node.name) == InputKind.USER_INPUT:
                inputs += size
            else:
                weights += size
            continue
        if node.op != "call_function":
            continue
        sizes[node.name] = size
        live += size
        peak = max(peak, live)
        dying.setdefault(last[node.name], []).append(node.name)
        for name in dying.pop(i, ()):
            live -= sizes.get(name, 0)
    return CaptureEstimate(inputs, weights, peak)


def placeholder_values(ep: Any, inputs: list[Any]) -> dict[str, Any]:
    """The value of each placeholder of ``ep``'s graph: user inputs in order, then parameters,
    buffers and lifted constants from the exported program's state."""
    from torch.export.graph_signature import InputKind

    values: dict[str, Any] = {}
    user = iter(inputs)
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            values[spec.arg.name] = next(user)
        elif spec.target in ep.state_dict:
            values[spec.arg.name] = ep.state_dict[spec.target]
        else:
            values[spec.arg.name] = ep.constants[spec.target]
    return values


def producer(node: Any) -> Any:
    """The node whose op made ``node``'s value: ``node`` itself, or, through getitems of a
    multi-output op (a convolution's backward), that op's node."""
    import operator

    import torch.fx

    while node.target is operator.getitem and isinstance(node.args[0], torch.fx.Node):
        node = node.args[0]
    return node


class CapturedValues(dict):
    """The values a pass still holds (node name -> value), and ``float64(name)``: that node's op run
    again in float64 on the (widened) values it read, where they are still held and the copies fit
    the capture budget, else None. Node-wise validation asks it where the IR misses the framework's
    float32 value: the float32 result of a long sum (a convolution's weight gradient over two million
    terms) strays further from the exact one than float32's tolerance of the summed terms.
    ``recompute(values, name)`` does the work (``float64_recompute``); None: no recompute."""

    def __init__(self, recompute: Callable[[CapturedValues, str], Any] | None = None) -> None:
        super().__init__()
        self._recompute = recompute

    def float64(self, name: str) -> Any:
        return self._recompute(self, name) if self._recompute is not None else None


def float64_recompute(nodes: list[Any], budget: int) -> Callable[[CapturedValues, str], Any]:
    """``CapturedValues.float64`` over the graph's ``nodes``: a getitem indexes its producer's
    value (recomputed for each getitem asked: keeping it would hold memory the capture's estimate
    does not count)."""
    import torch
    import torch.fx

    from solar_assets.golden.reference64 import in_float64

    by_name = {n.name: n for n in nodes}

    class _Gone(Exception):
        pass

    def widened_copy(live: CapturedValues, a: Any) -> Any:  # a copy: an in-place op must not write a live value
        if isinstance(a, torch.fx.Node):
            if a.name not in live:
                raise _Gone(a.name)
            a = live[a.name]
        if isinstance(a, torch.Tensor):
            return a.to(torch.float64, copy=True) if a.is_floating_point() else a.clone()
        if isinstance(a, (tuple, list)):
            return type(a)(widened_copy(live, x) for x in a)
        return a

    def run(live: CapturedValues, node: Any) -> Any:
        if node.op != "call_function" or torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ()):
            return None  # a random op again would draw other values and move the generator the pass uses
        held = sum(2 * _nbytes(live[a.name]) for a in node.all_input_nodes if a.name in live) \
            + 2 * _nbytes(node.meta.get("val"))
        if held > budget:
            log.debug("no float64 recompute of %s: %d bytes of float64 copies, over the budget", node.name, held)
            return None
        try:
            args = tuple(widened_copy(live, a) for a in node.args)
            kwargs = {k: widened_copy(live, v) for k, v in node.kwargs.items()}
        except _Gone as gone:
            log.debug("no float64 recompute of %s: %s is no longer held", node.name, gone)
            return None
        with torch.no_grad(), in_float64():
            return node.target(*args, **kwargs)

    def recompute(live: CapturedValues, name: str) -> Any:
        node = by_name.get(name)
        if node is None:
            return None
        made_by = producer(node)
        indices = []  # the getitems from the producer down to this node
        while node is not made_by:
            indices.append(node.args[1])
            node = node.args[0]
        value = run(live, made_by)
        for index in reversed(indices):
            value = None if value is None else value[index]
        return value

    return recompute


def run_capture(ep: Any, inputs: list[Any], on_node: Callable[[str, dict[str, Any]], None],
                extra: Mapping[str, int] | None = None, float64: bool = False) -> float:
    """Run ``ep``'s graph once on real ``inputs``; after each node (placeholders included, in
    graph order) call ``on_node(name, live)``, ``live`` mapping node names to the values still
    needed. ``float64``: the arithmetic in float64 (inputs and weights widened exactly, as the
    golden run's float64 pass: ``golden.reference64``), so a check can hold the IR to float64
    rounding. Returns the seconds the pass took."""
    import torch
    import torch.fx

    start = time.perf_counter()
    nodes = list(ep.graph.nodes)
    last = last_uses(ep.graph, extra)
    dying: dict[int, list[str]] = {}
    for name, at in last.items():
        dying.setdefault(at, []).append(name)
    order = {n.name: i for i, n in enumerate(nodes)}
    placeholders = placeholder_values(ep, inputs)
    if float64:
        from solar_assets.golden.reference64 import widened

        placeholders = {name: widened(value) for name, value in placeholders.items()}
    # a float64 pass's values are already the float64 reference: no recompute there
    live = CapturedValues(None if float64 else float64_recompute(nodes, capture_budget()))

    asserts_dtype = {torch.ops.aten._assert_tensor_metadata.default}  # the float32 the export saw

    class _Capture(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            if float64 and n.op == "call_function" and n.target in asserts_dtype:
                value = None  # the pass runs in float64 on purpose: a dtype assertion would refuse it
            elif n.op == "output":
                value = None  # the returned values were seen as they were made, and may be freed by now
            else:
                value = placeholders[n.name] if n.op == "placeholder" else super().run_node(n)
            live[n.name] = value
            self.env[n] = value
            on_node(n.name, live)
            for name in dying.pop(order[n.name], ()):
                live.pop(name, None)
                node = nodes[order[name]]
                if node.op != "output" and node in self.env and name not in ("output",):
                    self.env.pop(node, None)
            return value

    from solar_assets.workloads.in_forward import deterministic_random

    import contextlib

    from solar_assets.golden.reference64 import in_float64

    interp = _Capture(ep.graph_module, garbage_collect_values=False)
    precision = in_float64() if float64 else contextlib.nullcontext()
    with torch.no_grad(), deterministic_random(torch.float64 if float64 else None), precision:
        interp.run(*[placeholders[n.name] for n in nodes if n.op == "placeholder"])
    return time.perf_counter() - start
