"""The Affine Loop IR: committed schemas in sync, the checker's verdicts and messages, printing."""
from __future__ import annotations

from pathlib import Path

import pytest

from ir_schemas import Kernel, Loop, Program, Reshape, TensorDecl
from ir_schemas.export import HERE, SCHEMAS, render
from solar_assets.errors import IRError
from solar_assets.ir import check_program, format_program, parse_kernel


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schema_matches_models(name):
    committed = (HERE / name).read_text()
    assert committed == render(name), f"ir_schemas/{name} is stale: run python -m ir_schemas.export"


def _t(name, shape, role="intermediate", **kw):
    binding = {"input": f"input:{kw.pop('pos', 0)}", "weight": f"param:{name}"}.get(role)
    return TensorDecl(name=name, shape=shape, dtype="float32", role=role, binding=binding, **kw)


def _program(steps, tensors, inputs=("X",), outputs=("Y",)):
    return Program(name="p", tensors=tuple(tensors), inputs=inputs, outputs=outputs, steps=tuple(steps))


def _k(name, loops, out, update, expr, **kw):
    return Kernel(name=name, loops=tuple(Loop(var=v, extent=e) for v, e in loops), out=out,
                  update=update, expr=expr, **kw)


CONV = _program(
    [_k("conv", [("p", 4), ("r", 3)], "Y[p]", "+=", "X[p*2 + r - 1] * W[r]")],
    [_t("X", (8,), "input", pad_value=0.0), _t("W", (3,), "weight"), _t("Y", (4,), "output")],
)


def test_a_strided_padded_conv_checks_and_prints():
    (pk,) = check_program(CONV)
    assert pk.is_sum_of_products and pk.ops_per_iteration == 2
    assert str(pk.reads[0]) == "X[p*2 + r - 1]"
    assert format_program(CONV).splitlines()[-2] == "  conv: for p<4, r<3: Y[p] += X[p*2 + r - 1] * W[r]"


def test_non_affine_subscript_is_rejected_naming_the_kernel():
    bad = _program([_k("sq", [("i", 4)], "Y[i]", "=", "X[i*i]")],
                   [_t("X", (16,), "input"), _t("Y", (4,), "output")])
    with pytest.raises(IRError, match=r"kernel 'sq'.*'i \* i' is not affine"):
        check_program(bad, "bad.json")


def test_out_of_range_read_without_pad_value_is_rejected():
    bad = _program([_k("shift", [("i", 4)], "Y[i]", "=", "X[i + 1]")],
                   [_t("X", (4,), "input"), _t("Y", (4,), "output")])
    with pytest.raises(IRError, match=r"(?s)bad\.json: kernel 'shift'.*ranges over \[1, 4\] but X has extent 4 and no pad_value"):
        check_program(bad, "bad.json")


@pytest.mark.parametrize("expr, message", [
    ("Z[i]", "undeclared tensor 'Z'"),
    ("foo(X[i])", "unknown scalar function 'foo'"),
    ("X[i] + j", "unknown name 'j'"),
    ("X[i, 0]", "has 2 subscripts but X has rank 1"),
    ("X[i] if X[i] else 0", "IfExp"),
    ("__import__('os')", "unknown scalar function '__import__'"),
])
def test_checker_messages_say_what_is_wrong(expr, message):
    bad = _program([_k("k0", [("i", 4)], "Y[i]", "=", expr)], [_t("X", (4,), "input"), _t("Y", (4,), "output")])
    with pytest.raises(IRError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        check_program(bad)


def test_assignment_must_cover_every_loop():
    bad = _program([_k("k0", [("i", 4), ("j", 3)], "Y[i]", "=", "X[i]")],
                   [_t("X", (4,), "input"), _t("Y", (4,), "output")])
    with pytest.raises(IRError, match="loop 'j' is not in the output subscript"):
        check_program(bad)


def test_reshape_must_keep_the_element_count():
    bad = _program([Reshape(name="r", src="X", out="Y")], [_t("X", (4, 3), "input"), _t("Y", (5,), "output")])
    with pytest.raises(IRError, match=r"reshape 'r' changes X: float32\(4, 3\) into Y: float32\(5,\)"):
        check_program(bad)


def test_reading_before_writing_is_rejected():
    bad = _program([_k("k0", [("i", 4)], "Y[i]", "=", "T[i]"), _k("k1", [("i", 4)], "T[i]", "=", "X[i]")],
                   [_t("X", (4,), "input"), _t("T", (4,)), _t("Y", (4,), "output")])
    with pytest.raises(IRError, match="kernel 'k0' reads 'T' before any step writes it"):
        check_program(bad)


def test_program_round_trips_through_json():
    assert Program.model_validate_json(CONV.model_dump_json()) == CONV


def test_unknown_fields_fail_the_schema():
    data = CONV.model_dump()
    data["steps"][0]["tile"] = 4
    with pytest.raises(Exception, match="Extra inputs are not permitted"):
        Program.model_validate(data)


def test_parse_kernel_counts_ops():
    k = _k("gelu", [("i", 8)], "Y[i]", "=", "0.5 * X[i] * (1.0 + erf(X[i] * 0.7071))")
    pk = parse_kernel(k)
    assert pk.ops_per_iteration == 5 and not pk.is_sum_of_products and pk.iterations == 8


def test_scaling_a_single_read_is_not_a_mac_and_rank0_reads_parse():
    k = _k("mean", [("i", 8)], "M[()]", "+=", "X[i] * 0.125")
    pk = parse_kernel(k)
    assert not pk.is_sum_of_products and str(pk.out) == "M[()]"
    dot = parse_kernel(_k("dot", [("i", 8)], "M[()]", "+=", "X[i] * Y[i] * 0.5"))
    assert dot.is_sum_of_products and dot.ops_per_iteration == 3


# ------------------------------------------------------------------ cost faithfulness, origins
def _gemm_with_extra_loop(r_extent: int) -> Program:
    """The issue's inflated IR: ``for m, n, k, r: Y[m, n] += X[m, k] * W[n, k] / r_extent``."""
    return _program(
        [_k("fc", [("m", 4), ("n", 5), ("k", 6), ("r", r_extent)], "Y[m, n]", "+=",
            f"X[m, k] * W[n, k] / {r_extent}")],
        [_t("X", (4, 6), "input"), _t("W", (5, 6), "weight"), _t("Y", (4, 5), "output")],
    )


def test_a_loop_that_indexes_nothing_is_rejected_naming_kernel_and_variable():
    with pytest.raises(IRError, match=r"kernel 'fc' loops over 'r' \(1024 iterations\), which indexes neither"):
        check_program(_gemm_with_extra_loop(1024))


def test_a_trip_count_one_loop_is_tolerated():
    check_program(_gemm_with_extra_loop(1))


def test_a_loop_used_only_by_an_index_read_counts_as_indexing():
    """``Y[n] += E[I[n, j]]``: j indexes the index tensor, so the loop is real work."""
    p = _program(
        [_k("bag", [("n", 3), ("j", 4)], "Y[n]", "+=", "E[I[n, j]]")],
        [_t("E", (10,), "weight"), TensorDecl(name="I", shape=(3, 4), dtype="int64", role="input", binding="input:0"),
         _t("Y", (3,), "output")], inputs=("I",))
    check_program(p)


def test_origins_are_optional_printed_and_kept_by_the_schema():
    from ir_schemas import Origin

    origin = Origin(node="convolution_1", op="aten.convolution.default", module="encoder.conv")
    k = CONV.steps[0].model_copy(update={"origin": origin})
    p = CONV.model_copy(update={"steps": (k,)})
    check_program(p)
    assert format_program(p).splitlines()[-2] == (
        "  conv: for p<4, r<3: Y[p] += X[p*2 + r - 1] * W[r]"
        "  # from convolution_1 (aten.convolution.default, encoder.conv)")
    assert Program.model_validate_json(p.model_dump_json()) == p
    assert Program.model_validate(CONV.model_dump(exclude_none=True)).steps[0].origin is None
    with pytest.raises(ValueError):
        Origin(node="x", op="y", line=3)  # strict: unknown keys are rejected
