"""Recurrent modules export as one op each, whatever the sequence length (``whole_recurrent_ops``).

``aten.lstm`` is CompositeImplicitAutograd: torch.export works out its output shapes by running the
unrolled per-step decomposition on fake tensors, so a 512-step, 6-layer LSTM took 150-190 s per
export (KernelBench level 3, 35_LSTM: 211 s in all). Exported through the ``solar::`` custom ops,
the export runs one shape function per module call (35_LSTM: 1.5-2 s per export; figures in
docs/kernelbench.md). Speed is measured in the bench, not here: these tests check what makes it
fast (the graph does not grow with the sequence) and that nothing else changes (values, eager runs).
"""
from __future__ import annotations

from pathlib import Path

import torch

from solar_assets.coverage.workload import check_workload
from solar_assets.translate.torch_lowering.recurrent import whole_recurrent_ops
from solar_assets.translate.torch_tracer import export_graph

BIDIRECTIONAL = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, 1, batch_first=True)
        self.rnn = nn.RNN(hidden_size, hidden_size, 1, nonlinearity="relu")

    def forward(self, x):
        h0 = torch.zeros(2 * self.lstm.num_layers, x.size(0), self.lstm.hidden_size)
        out, (h_n, c_n) = self.lstm(x, (h0, torch.ones_like(h0)))
        out, _ = self.gru(out)
        out, _ = self.rnn(out.transpose(0, 1))
        return out[-1] + h_n.sum(0) - c_n.mean(0)

batch_size = 3
seq_len = 9
input_size = 5
hidden_size = 6
num_layers = 2

def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, num_layers]
'''


class _Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(4, 8, 2, batch_first=True, bidirectional=True)
        self.gru = torch.nn.GRU(16, 8, bidirectional=True)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.gru(out)[0]


def _ops(ep) -> list[str]:
    return [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]


def test_graph_does_not_grow_with_the_sequence():
    torch.manual_seed(0)
    model = _Stack().eval()
    short = export_graph(model, [torch.randn(2, 3, 4)], "stack.py")
    long = export_graph(model, [torch.randn(2, 3000, 4)], "stack.py")
    assert _ops(short) == _ops(long)
    assert "solar.lstm.default" in _ops(long) and "solar.gru.default" in _ops(long)
    assert not any("sigmoid" in op or "addmm" in op for op in _ops(long))  # no unrolled step


def test_exported_values_and_eager_modules_unchanged():
    import torch.nn.modules.rnn as rnn

    torch.manual_seed(0)
    model = _Stack().eval()
    x = torch.randn(2, 7, 4)
    ep = export_graph(model, [x], "stack.py")
    with torch.no_grad():
        expected = model(x)  # eager: torch's own kernels (the patch is gone)
        got = ep.module()(x)
    assert rnn._VF is torch._VF
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    with whole_recurrent_ops():  # packed sequences keep torch's own path
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, [7, 5], batch_first=True)
        out, _ = model.lstm(packed)
    assert out.data.shape == (12, 16)


def test_bidirectional_stack_validates(tmp_path: Path):
    path = tmp_path / "bidirectional_stack.py"
    path.write_text(BIDIRECTIONAL)
    row = check_workload(path, tmp_path / "cache")
    assert row.validated and row.validated_size == "full", row.error
