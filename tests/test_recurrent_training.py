"""A recurrent net's training step: torch's decomposition with its time loop a ``scan``, autograd's
backward a second ``scan``, both lowered as one Repeat (``workloads.recurrent_scan``,
``translate.torch_lowering.control``).

References: ``p.grad`` after a plain ``loss.backward()`` on the file's own model, FlopCounterMode
over that eager forward and backward (oneDNN off, so that the eager LSTM is ATen's own ops), and
the IR's size at two sequence lengths.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from solar_assets.workloads.training import TrainSpec

TEMPLATE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super(Model, self).__init__()
        self.rnn = nn.{cls}(input_size, hidden_size, num_layers, {options})
        self.fc = nn.Linear(hidden_size * {dirs}, output_size)

    def forward(self, x, h0, c0=None):
        out, _ = self.rnn(x, h0 if c0 is None else (h0, c0))
        return self.fc(out{last})


batch_size = 3
sequence_length = {seq}
input_size = 5
hidden_size = 7
num_layers = 2
output_size = 4


def get_inputs():
    x = torch.rand({x_shape})
    h = torch.randn(num_layers * {dirs}, batch_size, hidden_size)
    return [x, {states}]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
'''

CASES = {
    "lstm_bidirectional": dict(cls="LSTM", options="batch_first=True, bidirectional=True", dirs=2,
                               x_shape="batch_size, sequence_length, input_size", last="[:, -1, :]",
                               states="h, torch.randn_like(h)"),
    "gru_time_major": dict(cls="GRU", options="bias=False", dirs=1, x_shape="sequence_length, batch_size, input_size",
                           last="[-1]", states="h"),
    "rnn_tanh_bidirectional": dict(cls="RNN", options="batch_first=True, bidirectional=True", dirs=2,
                                   x_shape="batch_size, sequence_length, input_size", last="[:, -1, :]", states="h"),
    "rnn_relu": dict(cls="RNN", options="nonlinearity='relu', batch_first=True", dirs=1,
                     x_shape="batch_size, sequence_length, input_size", last="[:, -1, :]", states="h"),
}


def _write(tmp_path: Path, case: str, seq: int = 6) -> Path:
    path = tmp_path / f"{case}_{seq}.py"
    path.write_text(TEMPLATE.format(seq=seq, **CASES[case]))
    return path


def _program(path: Path, spec: TrainSpec):
    from solar_assets.translate.torch_tracer import trace_torch
    from solar_assets.workloads import read_workload_source

    return trace_torch(read_workload_source(path, train=spec)).program


def _count(steps) -> int:
    return sum(1 + _count(getattr(s, "steps", ())) for s in steps)


def _repeats(steps) -> list[int]:
    found = []
    for s in steps:
        if hasattr(s, "extent"):
            found.append(s.extent)
        found += _repeats(getattr(s, "steps", ()))
    return found


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.slow
def test_the_step_gradients_equal_a_plain_backward(tmp_path, case):
    """No optimizer: the IR's loss and gradients are ``p.grad`` of the file's own model."""
    from solar_assets.execute import execute_program
    from solar_assets.golden import make_golden
    from solar_assets.workloads import load_torch_workload, read_workload_source

    path = _write(tmp_path, case)
    program = _program(path, TrainSpec(optimizer="none"))
    src = read_workload_source(path, train=TrainSpec(optimizer="none"))
    outputs = execute_program(program, make_golden(src).bindings(np.float64), np.float64)
    w = load_torch_workload(read_workload_source(path))
    model = w.model.train()
    loss = model(*w.inputs).float().sum()
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    assert len(outputs) == 1 + len(grads)
    np.testing.assert_allclose(outputs[0], loss.item(), rtol=1e-5)
    for got, want in zip(outputs[1:], grads):
        np.testing.assert_allclose(got, want.double().numpy(), rtol=1e-4, atol=1e-5 * float(want.abs().max()))


@pytest.mark.slow
@pytest.mark.parametrize("case", [pytest.param("lstm_bidirectional", marks=pytest.mark.slow), "gru_time_major"])
def test_the_ir_does_not_grow_with_the_sequence(tmp_path, case):
    """Five steps or fifty: the same IR, its loops over time Repeats of the sequence's length, one
    forward and one backward per layer and direction; the backward's last step (the initial
    state's gradient, which no one reads) peeled off."""
    short, long = (_program(_write(tmp_path, case, seq), TrainSpec()) for seq in (5, 50))
    assert _count(short.steps) == _count(long.steps)
    loops = 2 * CASES[case]["dirs"]  # layers x directions
    assert sorted(_repeats(short.steps)) == [4] * loops + [5] * loops
    assert sorted(_repeats(long.steps)) == [49] * loops + [50] * loops


@pytest.mark.parametrize("case", list(CASES))
def test_flop_counter_mode_counts_the_forward_and_backward_macs(tmp_path, case):
    """FlopCounterMode over the eager ``loss.backward()`` (ATen's own recurrent kernels, oneDNN
    off): 2 × the IR's MACs. Autograd's scan recomputes no product in its backward."""
    from torch.utils.flop_counter import FlopCounterMode

    from solar_assets.graph import build_einsum_graph
    from solar_assets.workloads import load_torch_workload, read_workload_source

    path = _write(tmp_path, case)
    program = _program(path, TrainSpec(optimizer="none"))
    w = load_torch_workload(read_workload_source(path))
    counter = FlopCounterMode(display=False)
    with torch.backends.mkldnn.flags(enabled=False), counter:
        w.model.train()(*w.inputs).float().sum().backward()
    assert 2 * build_einsum_graph(program).macs == counter.get_total_flops() > 0


STATEFUL_CELL = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(Model, self).__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)

    def forward(self, x, initial_hidden=None):
        if initial_hidden is not None:
            self.hidden.copy_(initial_hidden)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = torch.tanh(self.i2h(combined))
        return self.h2o(self.hidden)


batch_size = 4
input_size = 6
hidden_size = 5
output_size = 3


def get_inputs():
    return [torch.rand(batch_size, input_size), torch.rand(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
'''


def test_a_cell_that_keeps_its_state_in_a_tensor_attribute_trains(tmp_path):
    """``self.hidden`` written in place and reassigned in ``forward`` (a plain tensor attribute, made a
    buffer for the trace): the step binds it like any buffer and validates against autograd."""
    import solar

    path = tmp_path / "stateful_cell.py"
    path.write_text(STATEFUL_CELL)
    row = solar.analyze(path, hardware="H100_SXM", train=True, home=tmp_path / "home").rows[0]
    assert row.workload == "stateful_cell[train]" and row.validated, row


@pytest.mark.parametrize("train", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["forward", "train"])
def test_an_input_that_is_a_tuple_of_tensors_binds_as_the_export_flattens_it(tmp_path, train):
    """``get_inputs()`` returning ``[x, (h0, c0)]`` (an LSTM's state as one argument): the export
    takes the tuple's tensors as inputs 1 and 2, and the golden run numbers them the same way."""
    import solar

    path = tmp_path / "lstm_tuple_state.py"
    path.write_text(TEMPLATE.format(seq=6, **CASES["lstm_bidirectional"])
                    .replace("def forward(self, x, h0, c0=None):\n        out, _ = self.rnn(x, h0 if c0 is None else (h0, c0))",
                             "def forward(self, x, state):\n        out, _ = self.rnn(x, state)")
                    .replace("return [x, h, torch.randn_like(h)]", "return [x, (h, torch.randn_like(h))]"))
    assert "state)" in path.read_text() and "(h, torch.randn_like(h))]" in path.read_text()
    row = solar.analyze(path, hardware="H100_SXM", train=train, home=tmp_path / "home").rows[0]
    assert row.validated, row
