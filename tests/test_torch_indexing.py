"""Indexing, topk and recurrent lowerings (the IR extension), traced and validated against PyTorch.

Each case is a tiny workload file: traced by torch.export, lowered, executed by the IR
executor and compared with torch's own outputs (float64 strong check and float32).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ir_schemas import Repeat, TopK
from solar_assets.golden import make_golden
from solar_assets.translate import trace_torch
from solar_assets.validate import validate_program
from solar_assets.workloads import read_workload_source

# index tensors are buffers of the model (a torch.tensor made inside forward is a lifted constant)
BUFFERS = {
    "i23": [[0, 2, 1], [3, 3, 0]],
    "neg": [5, -1, 0, 2],
    "neg2": [[1, -4], [3, 0]],
    "a3": [4, 0, 1],
    "b3": [3, 2, 0],
    "sel": [5, 0, 0, 3],
    "sc": [[0, 1, 2, 3, 0], [3, 3, 3, 0, 1], [0, 0, 0, 0, 0]],
}
CASES = {
    "gather": ("torch.randn(2, 5)", "torch.gather(x, 1, self.i23) * 2"),
    "gather_view_src": ("torch.randn(5, 2)", "torch.gather(x.t(), 1, self.i23)"),
    "index_tensor": ("torch.randn(6, 4)", "x[self.neg] + x[:, self.neg2].sum()"),
    "index_two_dims": ("torch.randn(5, 3, 4)", "x[self.a3, :, self.b3]"),
    "index_select": ("torch.randn(4, 6)", "torch.index_select(x, 1, self.sel) + 1"),
    "scatter_add": ("torch.randn(3, 5)", "x.new_zeros(4, 5).scatter_add(0, self.sc, x)"),
    "scatter_value": ("torch.randn(2, 6)", "torch.zeros_like(x).scatter(1, self.i23, 1.0) + x"),
    "topk": ("torch.randn(4, 7)", "torch.topk(x, 3, dim=1).values * 2 + torch.topk(x, 2, dim=0, largest=False).indices.sum()"),
    "embedding": ("torch.tensor([[1, 4, 4], [0, 2, 3]])", "self.emb(x) * 3"),
    "fmod": ("torch.randn(3, 4) * 5", "torch.fmod(x, 1.5) + torch.fmod(torch.arange(12).view(3, 4) - 6, 5)"),
    "lstm": ("torch.randn(2, 5, 3)", "self.lstm(x)[0].sum(2) + self.lstm(x)[1][0].sum()"),
    "gru": ("torch.randn(5, 2, 3)", "self.gru(x)[0] * 1.0"),
    "rnn": ("torch.randn(2, 4, 3)", "self.rnn(x)[0] + self.rnn(x)[1].sum()"),
}


def _workload(tmp_path: Path, name: str, make: str, expr: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(f"""
        import torch
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = torch.nn.Embedding(5, 4)
                self.lstm = torch.nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
                self.gru = torch.nn.GRU(3, 4, num_layers=2, bidirectional=True)
                self.rnn = torch.nn.RNN(3, 4, batch_first=True)
                for name, value in {BUFFERS!r}.items():
                    self.register_buffer(name, torch.tensor(value))
            def forward(self, x):
                return {expr}
        def get_inputs(): return [{make}]
        def get_init_inputs(): return []
    """))
    return path


def _steps(program):
    return [s for s, _ in program.walk_steps()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_indexing_lowering_validates_against_pytorch(tmp_path, name):
    src = read_workload_source(_workload(tmp_path, name, *CASES[name]))
    translation = trace_torch(src)
    result = validate_program(translation.program, make_golden(src), source=src.path)
    assert result.ok, str(result)
    steps = _steps(translation.program)
    if name in ("lstm", "gru", "rnn"):
        repeats = [s for s in steps if isinstance(s, Repeat)]
        calls = 2 if name != "gru" else 1  # the expression calls the module this many times
        layers_dirs = {"lstm": 4, "gru": 4, "rnn": 1}[name]
        assert len(repeats) == calls * layers_dirs, "one Repeat over time per call, layer and direction"
        assert len(steps) <= calls * layers_dirs * 12 + 10, "the IR is small, not unrolled over time"
    if name == "topk":
        assert sum(isinstance(s, TopK) for s in steps) == 2
