"""Validation: the IR run on golden inputs, compared per output with messages a translator can act on."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from ir_schemas import Kernel, Loop, Program, TensorDecl
from solar_assets.validate import TOLERANCES, compare_outputs, tolerance_for, validate_program

RNG = np.random.default_rng(7)


@dataclass
class StandInGolden:
    """What validate_program needs of solar_assets.golden.Golden."""

    values: dict[str, np.ndarray]  # keyed by binding string
    outputs: list[np.ndarray]
    outputs64: list[np.ndarray] | None = None

    def bindings(self, dtype=np.float64) -> dict[str, np.ndarray]:
        return {k: v.astype(dtype) if v.dtype.kind == "f" else v for k, v in self.values.items()}


def layer_norm_program(eps: str = "1e-05", out_shape=(4, 8)) -> Program:
    def k(name, loops, out, update, expr):
        return Kernel(name=name, loops=tuple(Loop(var=v, extent=e) for v, e in loops), out=out, update=update,
                      expr=expr)
    rows = [("i", 4), ("j", 8)]
    return Program(
        name="layer_norm",
        tensors=(
            TensorDecl(name="X", shape=(4, 8), dtype="float32", role="input", binding="input:0"),
            TensorDecl(name="G", shape=(8,), dtype="float32", role="weight", binding="param:ln.weight"),
            TensorDecl(name="Mu", shape=(4,), dtype="float32", role="intermediate"),
            TensorDecl(name="Var", shape=(4,), dtype="float32", role="intermediate"),
            TensorDecl(name="Y", shape=out_shape, dtype="float32", role="output"),
        ),
        inputs=("X",),
        outputs=("Y",),
        steps=(
            k("mean", rows, "Mu[i]", "+=", "X[i, j] / 8"),
            k("var", rows, "Var[i]", "+=", "(X[i, j] - Mu[i]) ** 2 / 8"),
            k("norm", rows, "Y[i, j]", "=", f"(X[i, j] - Mu[i]) * rsqrt(Var[i] + {eps}) * G[j]"),
        ),
    )


def layer_norm_golden() -> StandInGolden:
    x, g = RNG.standard_normal((4, 8)), RNG.standard_normal(8)

    def reference(x, g, dtype):
        x, g = x.astype(dtype), g.astype(dtype)
        mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
        return (x - mu) / np.sqrt(var + dtype(1e-5)) * g

    return StandInGolden(values={"input:0": x.astype(np.float32), "param:ln.weight": g.astype(np.float32)},
                         outputs=[reference(x.astype(np.float32), g.astype(np.float32), np.float32)],
                         outputs64=[reference(x.astype(np.float32), g.astype(np.float32), np.float64)])


GOLDEN = layer_norm_golden()


def test_a_correct_program_passes_both_checks():
    result = validate_program(layer_norm_program(), GOLDEN)
    assert result.ok, str(result)
    assert [(c.name, c.dtype, c.reference) for c in result.checks] == [
        ("Y", "float64", "outputs64"), ("Y", "float32", "outputs")]
    strong, framework = result.checks
    assert strong.max_rel_error < 1e-12 and framework.max_rel_error < 1e-5
    assert result.max_abs_error == framework.max_abs_error and result.seconds > 0
    assert "ok" in strong.message and "1e-09*max|ref|" in strong.message


def test_a_slightly_wrong_constant_fails_only_the_float64_check():
    result = validate_program(layer_norm_program(eps="1.01e-05"), GOLDEN)
    strong, framework = result.checks
    assert not result.ok and not strong.ok and framework.ok
    assert strong.max_abs_error > strong.tolerance_abs
    assert strong.message.startswith("output 'Y' (float64 check against outputs64): max abs error ")
    for words in ("max rel error", "elements outside |got-ref| <= 1e-09*max|ref|", "shape (4, 8)"):
        assert words in strong.message
    assert result.failures() == [strong.message] and "FAILED" in str(result)


def test_an_off_by_one_subscript_fails_with_the_worst_element_named():
    def conv(shift):
        return Program(
            name="conv1d",
            tensors=(TensorDecl(name="X", shape=(12,), dtype="float32", role="input", binding="input:0"),
                     TensorDecl(name="W", shape=(3,), dtype="float32", role="weight", binding="param:w"),
                     TensorDecl(name="Y", shape=(9,), dtype="float32", role="output")),
            inputs=("X",), outputs=("Y",),
            steps=(Kernel(name="conv", loops=(Loop(var="i", extent=9), Loop(var="r", extent=3)), out="Y[i]",
                          update="+=", expr=f"X[i + r + {shift}] * W[r]"),),
        )
    x, w = RNG.standard_normal(12).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    ref = np.array([sum(float(x[i + r]) * float(w[r]) for r in range(3)) for i in range(9)])
    golden = StandInGolden({"input:0": x, "param:w": w}, [ref.astype(np.float32)], [ref])
    assert validate_program(conv(0), golden).ok
    bad = validate_program(conv(1), golden)
    assert not bad.ok and not any(c.ok for c in bad.checks)
    message = bad.checks[1].message
    assert message.startswith("output 'Y' (float32 check against outputs): max abs error")
    assert " at (" in message and "golden" in message and "9 of 9 elements outside" in message


def test_a_shape_mismatch_says_both_shapes():
    result = validate_program(layer_norm_program(), StandInGolden(
        GOLDEN.values, [np.zeros((4, 9), np.float32)], None))
    (check,) = result.checks
    assert not result.ok and check.golden_shape == (4, 9)
    assert check.message == "output 'Y' (float32 check against outputs): shape (4, 8) but golden has shape (4, 9)"
    assert result.notes == ["no float64 golden outputs: only the float32 comparison ran"]


def test_nan_where_golden_has_none_fails():
    ref = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = ref.copy()
    got[1, 2] = np.nan
    (check,) = compare_outputs(["out"], [got], [ref])
    assert not check.ok and "1 of 6 elements are NaN/inf where golden is not" in check.message
    assert "first at (1, 2)" in check.message
    same_nan = ref.copy()
    same_nan[0, 0] = np.nan
    (check,) = compare_outputs(["out"], [same_nan], [same_nan.copy()])
    assert check.ok


def test_errors_and_tolerances_are_defined_as_documented():
    ref = np.array([10.0, -20.0, 0.0], np.float32)
    got = ref + np.array([1e-3, -2e-3, 1e-3], np.float32)
    (check,) = compare_outputs(["y"], [got], [ref])  # float32 default: 1e-4 * 20 + 1e-4 * |ref|
    assert check.tolerance_abs == pytest.approx(2e-3) and check.rtol == 1e-4
    assert check.max_abs_error == pytest.approx(2e-3, rel=1e-3)
    assert check.max_rel_error == pytest.approx(2e-3 / 20, rel=1e-3)
    assert check.ok  # 2e-3 <= 2e-3 + 1e-4 * 20
    (check,) = compare_outputs(["y"], [got * 1.001], [ref])
    assert not check.ok
    (loose,) = compare_outputs(["y"], [got * 1.001], [ref], dtypes=["float16"])
    assert loose.ok and loose.rtol == 1e-2
    assert tolerance_for("float64", "float32") == TOLERANCES["float32"]
    assert tolerance_for("int64") == (0.0, 0.0)


def test_integers_must_match_exactly_and_kinds_must_agree():
    ref = np.array([1, 2, 3])
    (ok,) = compare_outputs(["idx"], [ref.copy()], [ref])
    (off,) = compare_outputs(["idx"], [ref + np.array([0, 1, 0])], [ref])
    (kind,) = compare_outputs(["idx"], [ref.astype(np.float32)], [ref])
    assert ok.ok and not off.ok and not kind.ok
    assert "1 of 3 elements differ (integers must match exactly; first at (1,): got 3, golden 2)" in off.message
    assert "the IR output is float32 (float32) but golden is int64" in kind.message


def test_output_count_mismatch_is_a_failed_check():
    ref = np.ones(3, np.float32)
    checks = compare_outputs(["a"], [ref], [ref, ref])
    assert [c.ok for c in checks] == [True, False]
    assert checks[1].message == "golden outputs output 1 (shape (3,)) has no IR output: the IR returns 1"


# --- validation refuses what checks nothing (NaN / inf / constant outputs) ---------------------------
def _elementwise_program(expr: str) -> Program:
    """``Y[i, j] = expr`` over a (4, 8) float32 input X."""
    return Program(
        name="elementwise",
        tensors=(TensorDecl(name="X", shape=(4, 8), dtype="float32", role="input", binding="input:0"),
                 TensorDecl(name="Y", shape=(4, 8), dtype="float32", role="output")),
        inputs=("X",), outputs=("Y",),
        steps=(Kernel(name="f", loops=(Loop(var="i", extent=4), Loop(var="j", extent=8)), out="Y[i, j]",
                      update="=", expr=expr),),
    )


def _golden_of(f, x: np.ndarray) -> StandInGolden:
    """Golden of ``f`` on the float32 input: in float32 and in float64 from the same values."""
    x32 = x.astype(np.float32)
    with np.errstate(invalid="ignore"):
        return StandInGolden({"input:0": x32}, [f(x32).astype(np.float32)], [f(x32.astype(np.float64))])


def test_an_all_nan_golden_output_is_rejected_naming_it():
    x = RNG.standard_normal((4, 8))
    golden = _golden_of(lambda a: np.full((4, 8), np.nan), x)
    result = validate_program(_elementwise_program("X[i, j] * nan"), golden)  # NaN == NaN everywhere
    assert not result.ok
    assert result.failures()[0] == ("output 'Y': the golden output is all NaN/inf (shape (4, 8)): comparing with "
                                    "it checks nothing; the workload must compute finite values on its inputs")
    inf_golden = _golden_of(lambda a: np.full((4, 8), np.inf), x)
    assert not validate_program(_elementwise_program("X[i, j] * inf + inf"), inf_golden).ok


def test_nan_positions_must_match_both_ways():
    x = RNG.standard_normal((4, 8))
    golden = _golden_of(np.log, x)  # NaN where x < 0
    assert np.isnan(golden.outputs[0]).any() and np.isfinite(golden.outputs[0]).any()
    assert validate_program(_elementwise_program("log(X[i, j])"), golden).ok
    # a NaN where the reference is finite (log|x| is finite everywhere) ...
    swapped = _golden_of(lambda a: np.log(np.abs(a)), x)
    result = validate_program(_elementwise_program("log(X[i, j])"), swapped)
    assert not result.ok and "NaN/inf where golden is not (or the reverse)" in result.failures()[0]
    # ... and a finite value where the reference has a NaN
    result = validate_program(_elementwise_program("log(abs(X[i, j]))"), golden)
    assert not result.ok and "NaN/inf where golden is not (or the reverse)" in result.failures()[0]


def test_an_ir_writing_the_constant_nan_fails():
    x = RNG.standard_normal((4, 8))
    finite = validate_program(_elementwise_program("nan"), _golden_of(np.tanh, x))
    assert not finite.ok and not any(c.ok for c in finite.checks)
    all_nan = validate_program(_elementwise_program("nan"), _golden_of(lambda a: np.full((4, 8), np.nan), x))
    assert not all_nan.ok


def test_a_constant_golden_with_an_ir_reading_no_input_is_rejected():
    x = RNG.standard_normal((4, 8))
    golden = _golden_of(lambda a: np.zeros((4, 8)), x)
    result = validate_program(_elementwise_program("0.0"), golden)
    assert not result.ok
    assert result.failures() == ["output 'Y': the IR computes it from no input or weight and the golden output is "
                                 "constant (np.float32(0.0) everywhere, shape (4, 8)): comparing them checks nothing"]
    assert validate_program(_elementwise_program("X[i, j] * 0.0"), golden).ok  # reads its input: a real check


def test_a_traced_constant_is_compared_for_its_value_and_shape():
    """The tracer's constants are the exported graph's (``torch.full``): compared, with a note; a
    wrong constant still fails."""
    x = RNG.standard_normal((4, 8))
    golden = _golden_of(lambda a: np.full((4, 8), 2.5), x)
    result = validate_program(_elementwise_program("2.5"), golden, traced=True)
    assert result.ok
    assert any("constant (np.float32(2.5), shape (4, 8)) that the traced graph computes from no input" in n
               for n in result.notes)
    assert not validate_program(_elementwise_program("2.0"), golden, traced=True).ok
    assert not validate_program(_elementwise_program("2.5"), golden).ok  # not the tracer's: refused


FORWARD_RETURNS = '''
import torch
import torch.nn as nn

batch_size = 4


class Model(nn.Module):
    def forward(self, x):
        y = x * 2
        return {value}


def get_inputs():
    return [torch.randn(batch_size, 8)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize(("value", "type_name"), [("None", "NoneType"), ("3", "int"), ("'y'", "str")])
def test_forward_returning_a_non_tensor_gives_one_line(tmp_path, value, type_name):
    from solar_assets.errors import SolarError
    from solar_assets.golden import make_golden
    from solar_assets.translate import trace_torch
    from solar_assets.workloads import read_workload_source

    path = tmp_path / "returns_nothing.py"
    path.write_text(FORWARD_RETURNS.format(value=value))
    src = read_workload_source(path)
    line = f"{path}: forward returned {type_name}; a workload returns a tensor or a tuple of tensors"
    for stage in (trace_torch, make_golden):
        with pytest.raises(SolarError) as caught:
            stage(src)
        assert str(caught.value) == line


def test_an_all_zero_float32_output_is_checked_against_the_terms_that_cancelled():
    """KernelBench level 2's 36 (a transposed convolution under ``min``): the weight gradient is 0
    in float32 and ~1e-17 in float64; ``atol``·max|ref| allowed nothing, so the IR's 1.45e-17
    failed. The floor follows the float32 drift (M ≈ drift / 2^-24); a real error still fails."""
    from types import SimpleNamespace

    from solar_assets.validate.compare import _extremes, _zero_reference_floor, compare_outputs

    ref32 = np.zeros((9, 3), np.float32)
    ref64 = np.full((9, 3), -1.0e-17)
    golden = SimpleNamespace(outputs=[ref32], outputs64=[ref64])
    notes: list[str] = []
    floor = _zero_reference_floor("dw", 0, golden, 1e-4, _extremes(golden, 0), notes)
    assert floor == pytest.approx(1e-4 * 1.0e-17 / 2.0 ** -24)  # by hand: 1.68e-14
    assert notes and "cancelled" in notes[0]
    [ok] = compare_outputs(["dw"], [np.full((9, 3), -1.45e-17, np.float32)], [ref32], 1e-4, 1e-4,
                           dtypes=["float32"], atol_floor=floor)
    [wrong] = compare_outputs(["dw"], [np.full((9, 3), 1e-12, np.float32)], [ref32], 1e-4, 1e-4,
                              dtypes=["float32"], atol_floor=floor)
    assert ok.ok and not wrong.ok
    nonzero = SimpleNamespace(outputs=[np.ones((2,), np.float32)], outputs64=[np.ones(2) + 1e-9])
    assert _zero_reference_floor("y", 0, nonzero, 1e-4, _extremes(nonzero, 0), []) == 0.0  # a reference with a scale keeps its own
