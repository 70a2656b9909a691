"""translate.export_memo: node-wise validation runs the translation's own fake-tensor export on the
model's real values, and gives the verdict a second export on real tensors gives."""
from __future__ import annotations

import textwrap

import pytest

from solar_assets.pipeline import read_source, translate_source
from solar_assets.translate import export_memo, torch_tracer
from solar_assets.validate.nodewise import relower_with_values, validate_nodewise

# parameters, a persistent and a non-persistent buffer, a plain tensor attribute, a constant made
# in forward and a weight tied to another: every way a value reaches the exported graph
STATEFUL = textwrap.dedent('''
    import torch
    import torch.nn as nn

    batch_size = 3
    dim = 16


    class Model(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.embed = nn.Linear(dim, dim)
            self.proj = nn.Linear(dim, dim, bias=False)
            self.proj.weight = self.embed.weight
            self.norm = nn.BatchNorm1d(dim)
            self.register_buffer("shift", torch.randn(dim), persistent=False)
            self.scale = torch.rand(dim) + 0.5

        def forward(self, x):
            y = self.norm(self.embed(x)) * self.scale + self.shift
            return self.proj(torch.relu(y)) * torch.tensor([0.25, 2.0, -1.0]).repeat(dim // 3 + 1)[:dim]


    def get_inputs():
        return [torch.randn(batch_size, dim)]


    def get_init_inputs():
        return [dim]
''')


@pytest.fixture
def stateful(tmp_path):
    export_memo.forget()
    path = tmp_path / "stateful.py"
    path.write_text(STATEFUL)
    src = read_source(path)
    yield src, translate_source(src, None)
    export_memo.forget()


def _verdict(result):
    return result.ok, [(c.name, c.ok, c.max_abs_error) for c in result.checks]


def test_node_wise_runs_the_translations_export_with_the_real_weights(stateful, monkeypatch):
    src, translation = stateful
    remembered = export_memo.recall(src.path, src.sha256, None)
    assert remembered is not None and remembered.program is translation.program
    again = validate_nodewise(src, translation)  # before: exports once more on real tensors
    export_memo.forget()
    reference = _verdict(validate_nodewise(src, translation))
    assert again.ok and _verdict(again) == reference

    translate_source(src, None)  # remembered again; exporting now would be a second export
    monkeypatch.setattr(torch_tracer, "export_graph", lambda *a, **k: pytest.fail("exported a second time"))
    ep, inputs, program, values = relower_with_values(src, None, translation.program)
    assert isinstance(ep, export_memo.RealStateProgram) and program is export_memo.recall(src.path, src.sha256, {}).program
    # every piece of state is the real model's, by name, and none is fake
    from torch._subclasses.fake_tensor import is_fake

    state = {**ep.state_dict, **ep.constants}
    assert state and not any(is_fake(v) for v in state.values())
    assert {"embed.weight", "norm.running_mean", "shift", "scale"} <= set(state)
    assert _verdict(validate_nodewise(src, translation)) == reference


def test_a_value_the_real_model_lacks_or_shapes_differently_falls_back_to_a_second_export(stateful, monkeypatch):
    import torch

    src, translation = stateful
    remembered = export_memo.recall(src.path, src.sha256, None)
    model = torch.nn.Module()
    assert export_memo.with_real_state(remembered.ep, model) is None  # no embed.weight on it

    from solar_assets.workloads import load_torch_workload

    real = load_torch_workload(src).model
    assert export_memo.with_real_state(remembered.ep, real) is not None
    real.scale = torch.ones(5)
    assert export_memo.with_real_state(remembered.ep, real) is None

    calls = []
    original = torch_tracer.export_graph
    monkeypatch.setattr(torch_tracer, "export_graph", lambda *a, **k: calls.append(1) or original(*a, **k))
    monkeypatch.setattr(export_memo, "with_real_state", lambda ep, model: None)
    assert validate_nodewise(src, translation).ok and calls == [1]


def test_the_full_size_export_outlives_the_sizing_searchs_traces(stateful):
    src, _ = stateful
    full = export_memo.recall(src.path, src.sha256, {})
    for n in (1, 2, 3):
        torch_tracer.trace_torch(src, {"batch_size": n})
    assert export_memo.recall(src.path, src.sha256, None) is full
    assert export_memo.recall(src.path, src.sha256, {"batch_size": 1}) is None  # only the last two scaled
    assert export_memo.recall(src.path, src.sha256, {"batch_size": 3}) is not None


def test_an_export_remembered_with_another_program_is_not_the_one_under_test(stateful, monkeypatch):
    """The memo is keyed by the file's path and digest, which miss a local module it imports: an
    export remembered before that module changed lowers to another program, and node-wise then
    exports again rather than pair the program under test with a stale graph."""
    src, translation = stateful
    calls = []
    original = torch_tracer.export_graph
    monkeypatch.setattr(torch_tracer, "export_graph", lambda *a, **k: calls.append(1) or original(*a, **k))
    other = translation.program.model_copy(update={"steps": translation.program.steps[:-1]})
    ep, _, program, _ = relower_with_values(src, None, other)
    assert calls == [1] and not isinstance(ep, export_memo.RealStateProgram)
    ep, _, program, _ = relower_with_values(src, None, translation.program.model_copy(deep=True))
    assert calls == [1] and isinstance(ep, export_memo.RealStateProgram)  # an equal program: the same export
