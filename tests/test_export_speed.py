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
