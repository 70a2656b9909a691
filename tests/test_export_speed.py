"""torch.export's materialisation of composite-implicit ops runs once per set of registrations
(``translate.export_speed``): the ops torch collects stay those of the uncached collection, and a
custom op registered afterwards is still seen."""
from __future__ import annotations

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
