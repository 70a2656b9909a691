"""Recurrent modules in a training step as PyTorch's own decomposition with its time loop rolled.

``aten.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu`` differentiate through ``torch._decomp``'s
decompositions, whose Python loop over time steps autograd records step by step: at KernelBench's
sizes (512 steps, 6 layers) the joint graph has ~100,000 nodes and the trace never ends. Here the
same decomposition runs (``_rnn_helper`` over layers and directions, ``F.linear`` for the input
projection of every step at once, ``lstm_cell`` / ``gru_cell`` / ``rnn_cell`` for one step), with the
loop over time handed to PyTorch's ``scan`` higher-order op instead of a Python ``for``. Autograd
differentiates ``scan`` itself (``torch._higher_order_ops.scan.ScanAutogradOp``): its backward is a
second ``scan`` over the steps in reverse, whose body is the joint graph of one step that autograd
builds from the cell — no backward formula is written here. Both lower as one ``Repeat`` each
(``translate.torch_lowering.control``), so the trace costs the same at 5 or 5,000 steps.

The eager step (the golden run) calls the modules as written; only the joint graph's trace goes
through here (``workloads.torch_training.trace_joint``).
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from solar_assets.workloads.recurrent_routing import routed_recurrent_ops

def _cell(name: str) -> Callable[..., Any]:
    """One time step of torch's decomposition: ``(states..., x_t, hh_weight[, hh_bias]) -> states``
    with ``x_t`` the step's row of the input projection and states of shape (1, B, H)."""
    from torch._decomp import decompositions as decomp

    if name == "lstm":
        def lstm(h, c, x_t, hh_weight, hh_bias=None):  # noqa: ANN001, ANN202
            return decomp.lstm_cell(x_t.unsqueeze(0), h, c, hh_weight, hh_bias, None, chunk_dim=2)
        return lstm
    if name == "gru":
        def gru(h, x_t, hh_weight, hh_bias=None):  # noqa: ANN001, ANN202
            return (decomp.gru_cell(x_t, h, None, None, hh_weight, hh_bias),)
        return gru
    inner = decomp.rnn_cell(torch.tanh if name == "rnn_tanh" else torch.relu)

    def rnn(h, x_t, hh_weight, hh_bias=None):  # noqa: ANN001, ANN202
        return (inner(x_t, h, None, None, hh_weight, hh_bias),)
    return rnn


def _one_layer(name: str, inp: torch.Tensor, hidden: Any, params: tuple[torch.Tensor, ...], has_biases: bool,
               reverse: bool = False) -> tuple[torch.Tensor, Any]:
    """``torch._decomp``'s ``one_layer_lstm`` / ``one_layer_rnn`` with ``scan`` for its loop: the
    input projection of all steps, then the recurrence (time-major ``inp``)."""
    from torch._higher_order_ops.scan import scan_op

    ih_weight, hh_weight = params[0], params[1]
    ih_bias, hh_bias = (params[2], params[3]) if has_biases else (None, None)
    states = [s.unsqueeze(0) for s in (hidden if name == "lstm" else (hidden,))]
    projected = F.linear(inp, ih_weight, ih_bias)
    projected = projected.flip(0) if reverse else projected
    cell = _cell(name)
    weights = (hh_weight,) if hh_bias is None else (hh_weight, hh_bias)

    def body(*args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        new = cell(*args)
        return (*new, new[0].squeeze(0).clone())  # the carries, then the step's output row

    *finals, out = scan_op(body, states, [projected], additional_inputs=weights)
    out = out.flip(0) if reverse else out
    finals = [s.squeeze(0) for s in finals]
    return out, (tuple(finals) if name == "lstm" else finals[0])


def scanned(name: str, x: torch.Tensor, hx: Any, params: list[torch.Tensor], has_biases: bool, num_layers: int,
            dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple[torch.Tensor, ...]:
    """``torch._VF.<name>`` (input overload) as torch's decomposition with the loop rolled."""
    from torch._decomp import decompositions as decomp

    layer = functools.partial(_one_layer, name)
    groups = decomp.gather_params(params, has_biases, False)
    if name == "lstm":
        hidden = list(zip(hx[0], hx[1]))
    else:
        hidden = list(hx.unbind(0))
    out, finals = decomp._rnn_helper(x, hidden, groups, has_biases, num_layers, dropout, train, bidirectional,
                                     batch_first, layer)
    if name == "lstm":
        h, c = zip(*finals)
        return out, torch.stack(h, 0), torch.stack(c, 0)
    return out, torch.stack(finals, 0)


def _scannable(name: str, hx: Any, params: Any, has_biases: bool, dropout: float, train: bool,
               num_layers: int) -> bool:
    """Plain weights (no LSTM projection) and no dropout between layers (random: the step as
    written differs from run to run), else torch's own path."""
    per = 4 if has_biases else 2
    hidden = hx[0] if name == "lstm" else hx
    if len(params) != hidden.shape[0] * per:
        return False
    if name == "lstm" and hx[0].shape[-1] != hx[1].shape[-1]:
        return False
    return not (dropout > 0 and train and num_layers > 1)


def _route(name: str, real: Any, x: torch.Tensor, hx: Any, params: Any, has_biases: bool, num_layers: int,
           dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple[torch.Tensor, ...]:
    if x.dim() != 3 or not _scannable(name, hx, params, has_biases, dropout, train, num_layers):
        return real(x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    return scanned(name, x, hx, list(params), has_biases, num_layers, dropout, train, bidirectional, batch_first)


def scanned_recurrent_ops() -> contextlib.AbstractContextManager[None]:
    """While active, ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` run as ``scanned`` (the joint graph's trace;
    an unbatched sequence, an LSTM projection or dropout between layers keep torch's own path)."""
    return routed_recurrent_ops(_route)


def unalias_scan_outputs(graph_module: Any) -> None:
    """Every ``scan`` body of ``graph_module`` made to return distinct tensors: autograd's partition
    of a step returns the new cell state both as a carry and as a saved value (one node twice),
    which ``functionalize`` (the joint graph's second trace) refuses as output aliasing. The second
    use of a node, and an input returned as it is, become a ``clone`` of it."""
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.higher_order.scan:
            continue
        body = graph_module.get_submodule(node.args[0].target)
        output = next(n for n in body.graph.nodes if n.op == "output")
        seen: set[Any] = set()
        values = []
        with body.graph.inserting_before(output):
            for value in output.args[0]:
                if isinstance(value, torch.fx.Node) and (value in seen or value.op == "placeholder"):
                    value = body.graph.call_function(torch.ops.aten.clone.default, (value,))
                    value.meta = dict(value.args[0].meta)
                seen.add(value)
                values.append(value)
        output.args = (type(output.args[0])(values),)
        body.recompile()
