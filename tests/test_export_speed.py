"""torch.export's materialisation of composite-implicit ops runs once per set of registrations
(``translate.export_speed``): the ops torch collects stay those of the uncached collection, and a
custom op registered afterwards is still seen."""
from __future__ import annotations

import functools

import torch
import torch._export.utils as export_utils

from solar_assets.translate.export_speed import _when_changed, materialise_when_registrations_change


def _uncached_collection() -> set:
    original = export_utils._materialize_cpp_cia_ops
    unwrapped = getattr(original, "__wrapped__", original)
    export_utils._materialize_cpp_cia_ops = unwrapped
    try:
        return set(export_utils._collect_all_valid_cia_ops())
    finally:
        export_utils._materialize_cpp_cia_ops = original


def test_materialisation_runs_again_only_when_the_registrations_change():
    calls, registrations = [], ["aten::a", "aten::b"]
    materialise = _when_changed(lambda: calls.append(1), lambda: list(registrations))
    materialise()
    materialise()
    assert len(calls) == 1
    registrations.append("custom::c")
    materialise()
    materialise()
    assert len(calls) == 2


def test_the_collected_ops_are_torchs_and_a_custom_op_registered_later_is_seen():
    materialise_when_registrations_change()
    assert getattr(export_utils._materialize_cpp_cia_ops, "__wrapped_by_solar__", False)
    before = set(export_utils._collect_all_valid_cia_ops())
    assert before == _uncached_collection()

    lib = torch.library.Library("solar_speed_test", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x + x, "CompositeImplicitAutograd")
        after = set(export_utils._collect_all_valid_cia_ops())
        assert torch.ops.solar_speed_test.twice.default in after
        assert after - before == {torch.ops.solar_speed_test.twice.default}
        assert after == _uncached_collection()
    finally:
        lib._destroy()


# ---------------------------------------------------------------------------- the CIA override
def _cia_table() -> dict:
    """What ``run_decompositions`` overrides for solar's table: every preservable composite op."""
    from torch.export.exported_program import _split_decomp_table_to_cia_and_python_decomp

    from solar_assets.translate.torch_tracer import decomposition_table

    table = decomposition_table()
    table = table.materialize() if hasattr(table, "materialize") else dict(table)
    return _split_decomp_table_to_cia_and_python_decomp(table)[0]


def _meaning(value: object) -> object:
    """A kernel entry compared by what it runs: a partial by its function and arguments, a function
    by its code and closure (torch makes a local one per call), anything else by identity."""
    if isinstance(value, functools.partial):
        return ("partial", _meaning(value.func), value.args,
                tuple(sorted((k, _meaning(v)) for k, v in value.keywords.items())))
    code = getattr(value, "__code__", None)
    if code is not None:
        return ("function", id(code), tuple(_meaning(c.cell_contents) for c in value.__closure__ or ()))
    return id(value)


def _state(ops: list) -> tuple:
    from torch._subclasses.fake_impls import op_implementations_dict

    kernels = [[(k, _meaning(v)) for k, v in op.py_kernels.items()] for op in ops]
    fake = [op in op_implementations_dict for op in ops]
    rules = [_meaning(op_implementations_dict[op].keywords["original_callable"]) if op in op_implementations_dict
             and isinstance(op_implementations_dict[op], functools.partial) else None for op in ops]
    return kernels, fake, rules


def test_the_fast_override_makes_torchs_entries_and_puts_everything_back():
    import torch.export.exported_program as ep_module

    from torch._subclasses import fake_impls

    from solar_assets.translate.export_speed import _override_cia

    current = ep_module._override_composite_implicit_decomp
    torchs = current.__wrapped__ if getattr(current, "__wrapped_by_solar__", False) else current
    cia = _cia_table()
    ops = list(cia)
    assert len(ops) > 100
    rules, checks = dict(fake_impls.op_implementations_dict), list(fake_impls.op_implementations_checks)

    def fake_rules_as_before() -> None:  # torch drops an op's own fake rule on leaving (so does ours)
        fake_impls.op_implementations_dict.clear()
        fake_impls.op_implementations_dict.update(rules)
        fake_impls.op_implementations_checks[:] = checks

    before = _state(ops)
    with torchs(cia):
        inside_torch = _state(ops)
    after_torch = _state(ops)
    fake_rules_as_before()
    with _override_cia(cia):
        inside_ours = _state(ops)
    after_ours = _state(ops)
    fake_rules_as_before()
    assert inside_ours == inside_torch
    assert after_ours == after_torch
    assert after_torch[0] == before[0]  # every op's kernel table as it was
    assert inside_ours[0] != before[0]  # (the comparison sees the override)


def test_exports_through_the_fast_override_are_torchs():
    import torch.export.exported_program as ep_module

    from solar_assets.translate.export_speed import fast_cia_override
    from solar_assets.translate.torch_tracer import decomposition_table

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.norm = torch.nn.BatchNorm2d(4)
            self.proj = torch.nn.Linear(8, 8)

        def forward(self, x, q):
            y = torch.nn.functional.gelu(self.norm(self.conv(x))).flatten(2)
            a = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
            return self.proj(y[..., :8]).softmax(-1), a.sum(-1)

    model = Block().eval()
    args = (torch.randn(2, 3, 4, 4), torch.randn(1, 2, 5, 8))

    def graph() -> list:
        ep = torch.export.export(model, args).run_decompositions(decomposition_table())
        return [(n.op, str(n.target), tuple(getattr(n.meta.get("val"), "shape", ()))) for n in ep.graph.nodes]

    fast_cia_override()
    ours = ep_module._override_composite_implicit_decomp
    assert getattr(ours, "__wrapped_by_solar__", False)
    try:
        ep_module._override_composite_implicit_decomp = ours.__wrapped__
        expected = graph()
    finally:
        ep_module._override_composite_implicit_decomp = ours
    got = graph()
    assert got == expected
    assert ("call_function", "aten.scaled_dot_product_attention.default", (1, 2, 5, 8)) in got  # kept whole


# ---------------------------------------------------------------------------- one trace
def _described(ep) -> tuple:
    """An exported program as the lowering sees it: each node's op, target, shape and dtype, each
    call node's origin (module scope, source line, the user's call and its op), the signature."""
    from solar_assets.translate.torch_origin import node_origin

    nodes = []
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        origin = node_origin(n).model_dump() if n.op == "call_function" else None
        nodes.append((n.op, n.name, str(n.target), tuple(getattr(val, "shape", ())), str(getattr(val, "dtype", "")),
                      origin))
    signature = ([(str(s.kind), s.target, getattr(s.arg, "name", None)) for s in ep.graph_signature.input_specs],
                 [(str(s.kind), s.target, getattr(s.arg, "name", None)) for s in ep.graph_signature.output_specs])
    return nodes, signature


def _both(monkeypatch, model, args) -> tuple:
    """``export_graph`` of the model with torch's two traces, then with the one trace."""
    from solar_assets.translate import export_speed
    from solar_assets.translate.torch_tracer import export_graph

    def two_traces(m, a, table):
        return torch.export.export(m, a).run_decompositions(table)

    with monkeypatch.context() as patched:
        patched.setattr(export_speed, "export_decomposed", two_traces)
        two = export_graph(model, list(args), "model.py")
    return two, export_graph(model, list(args), "model.py")


class _ConvBlock(torch.nn.Module):
    """Training mode as KernelBench leaves its models: batch norm updates its running statistics."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.relu = torch.nn.ReLU(inplace=True)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(x, 1))


class _MixedBlock(torch.nn.Module):
    """A table decomposition (hardsigmoid), an in-place add, a two-output op (max over a dim),
    attention kept whole, dropout and layer norm."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(16)
        self.proj = torch.nn.Linear(16, 16)
        self.drop = torch.nn.Dropout(0.0)

    def forward(self, x, q):
        h = self.drop(torch.nn.functional.gelu(self.proj(self.norm(x))))
        h.add_(x)
        values, indices = torch.max(torch.nn.functional.hardsigmoid(h), dim=-1)
        a = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        return values.clamp(max=0.5), indices, a


def test_one_trace_gives_the_two_traces_graph_and_origins(monkeypatch):
    for model, args in ((_ConvBlock(), (torch.randn(2, 3, 8, 8),)),
                        (_MixedBlock(), (torch.randn(2, 4, 16), torch.randn(1, 2, 5, 8)))):
        two, one = _both(monkeypatch, model, args)
        assert _described(one) == _described(two)
    calls = {(origin["call"], origin["call_op"]) for *_, origin in _described(one)[0] if origin}
    assert calls >= {  # the user's calls, not their decompositions
        ("linear", "aten.linear.default"), ("hardsigmoid", "aten.hardsigmoid.default"),
        ("add_", "aten.add_.Tensor"), ("max_1", "aten.max.dim")}


def test_a_tensor_made_in_forward_is_read_as_it_is_not_copied(monkeypatch):
    """``torch.tensor(0.5)`` in forward: the two traces copy the constant (``clone``, the re-trace's
    functionalised ``lift_fresh_copy``); the one trace keeps ``lift_fresh_copy``, which the lowering
    reads as the constant itself. Everything else is the same."""
    from solar_assets.translate.torch_tracer import lower_exported

    class Clamped(torch.nn.Module):
        def forward(self, x):
            return torch.min(x * 2.0, torch.tensor(0.5))

    two, one = _both(monkeypatch, Clamped(), (torch.randn(4, 8),))
    ops = [[str(n.target) for n in ep.graph.nodes if n.op == "call_function"] for ep in (two, one)]
    assert ops == [["aten.mul.Tensor", "aten.clone.default", "aten.minimum.default"],
                   ["aten.mul.Tensor", "aten.lift_fresh_copy.default", "aten.minimum.default"]]
    steps = [[s.name for s in lower_exported(ep, "clamped", "model.py").steps] for ep in (two, one)]
    assert steps == [["c_lifted_tensor_0", "mul", "clone", "minimum"], ["c_lifted_tensor_0", "mul", "minimum"]]


def test_one_trace_keeps_the_recurrent_ops_whole(monkeypatch):
    class Recurrent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return out[:, -1], h

    two, one = _both(monkeypatch, Recurrent(), (torch.randn(2, 5, 8),))
    assert _described(one) == _described(two)
    assert any(str(n.target).startswith("solar.") for n in one.graph.nodes)


def test_a_forward_that_assigns_a_buffer_takes_the_two_traces(monkeypatch):
    """The one trace would record the buffer's update wrong (its value before the assignment)."""
    from solar_assets.translate.torch_tracer import attributes_to_buffers

    class Cell(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = torch.zeros(2, 4)
            self.step = torch.nn.Linear(8, 4)

        def forward(self, x, initial):
            self.hidden.copy_(initial)
            self.hidden = torch.tanh(self.step(torch.cat((x, self.hidden), dim=1)))
            return self.hidden * 2

    model = Cell()
    attributes_to_buffers(model)
    two, one = _both(monkeypatch, model, (torch.randn(2, 4), torch.randn(2, 4)))
    assert _described(one) == _described(two)
    mutation = [s for s in one.graph_signature.output_specs if str(s.kind).endswith("BUFFER_MUTATION")]
    assert [s.arg.name for s in mutation] == ["tanh"]


def test_the_one_trace_puts_torch_back_and_falls_back_on_failure(monkeypatch):
    from torch._subclasses.functional_tensor import FunctionalTensorMode
    from torch.export import _trace
    from torch.fx.experimental.proxy_tensor import PythonKeyTracer

    from solar_assets.translate.export_speed import _composite_ops, export_decomposed
    from solar_assets.translate.torch_tracer import decomposition_table

    pieces = (_trace._export_to_aten_ir, PythonKeyTracer.create_node, FunctionalTensorMode.__torch_dispatch__)
    ops = _composite_ops()
    kernels = [dict(op.py_kernels) for op in ops]
    model, args = _ConvBlock(), (torch.randn(2, 3, 8, 8),)
    expected = _described(torch.export.export(model, args).run_decompositions(decomposition_table()))
    export_decomposed(model, args, decomposition_table())
    assert (_trace._export_to_aten_ir, PythonKeyTracer.create_node, FunctionalTensorMode.__torch_dispatch__) == pieces
    assert [dict(op.py_kernels) for op in ops] == kernels

    original = _trace._export

    def failing(*a, **k):  # the one trace (AOT dispatch) fails; torch.export's own call goes on
        if not k.get("pre_dispatch"):
            raise RuntimeError("the one trace failed")
        return original(*a, **k)

    monkeypatch.setattr(_trace, "_export", failing)
    fallen_back = export_decomposed(model, args, decomposition_table())
    assert _described(fallen_back) == expected  # torch's two traces
    assert (_trace._export_to_aten_ir, PythonKeyTracer.create_node, FunctionalTensorMode.__torch_dispatch__) == pieces


def test_a_tied_weight_is_read_through_one_placeholder(monkeypatch):
    """An embedding and the output projection sharing one weight (as HF language models tie them):
    both uses read one placeholder, as in the two traces, so the lowering sees one tensor."""
    class TiedLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(50, 16)
            self.head = torch.nn.Linear(16, 50, bias=False)
            self.head.weight = self.embed.weight

        def forward(self, ids):
            return self.head(torch.tanh(self.embed(ids)))

    two, one = _both(monkeypatch, TiedLM(), (torch.randint(0, 50, (2, 7)),))
    assert _described(one) == _described(two)
    read = [n.name for n in one.graph.nodes if n.op == "placeholder" and n.users]
    assert read == ["p_head_weight", "ids"]
