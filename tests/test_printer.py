"""The IR printer on a small hand-written program: weights and typed binders in the header, a
reshape's target shape, the tensor table, and the same reshape text in the einsum graph."""
from __future__ import annotations

from ir_schemas import Kernel, Loop, Program, Reshape, TensorDecl, TopK
from solar_assets.graph import build_einsum_graph
from solar_assets.ir import check_program, format_program, format_step


def _t(name, shape, role="intermediate", binding=None, dtype="float32"):
    return TensorDecl(name=name, shape=shape, dtype=dtype, role=role, binding=binding)


def _k(name, loops, out, update, expr):
    return Kernel(name=name, loops=tuple(Loop(var=v, extent=e) for v, e in loops), out=out, update=update, expr=expr)


def mlp_topk() -> Program:
    """``y = (x @ w + b).reshape(2, 6)``, then its two largest per row."""
    return Program(
        name="mlp_topk",
        tensors=(_t("x", (3, 4), "input", "input:0"), _t("w", (4, 4), "weight", "param:w"),
                 _t("b", (4,), "weight", "param:b"), _t("h", (3, 4)), _t("y", (2, 6), "output"),
                 _t("v", (2, 2), "output"), _t("i", (2, 2), "output", dtype="int64")),
        inputs=("x",), outputs=("y", "v", "i"),
        steps=(_k("mm", [("m", 3), ("n", 4), ("k", 4)], "h[m, n]", "+=", "x[m, k] * w[k, n]"),
               _k("bias", [("m", 3), ("n", 4)], "h[m, n]", "=", "h[m, n] + b[n]"),
               Reshape(name="view", src="h", out="y"),
               TopK(name="top", src="y", axis=1, k=2, values="v", indices="i")),
    )


EXPECTED = """\
program mlp_topk(x: float32[3,4]; weights w: float32[4,4], b: float32[4]) -> (y: float32[2,6], v: float32[2,2], i: int64[2,2])
  input        x: float32[3,4]  (input:0)
  weight       w: float32[4,4]  (param:w)
  weight       b: float32[4]  (param:b)
  intermediate h: float32[3,4]
  output       y: float32[2,6]
  output       v: float32[2,2]
  output       i: int64[2,2]
  mm: for m<3, n<4, k<4: h[m, n] += x[m, k] * w[k, n]
  bias: for m<3, n<4: h[m, n] = h[m, n] + b[n]
  view: y = reshape(h, shape=[2,6])
  top: v, i = topk(y, k=2, axis=1, largest)
  return y, v, i"""


def test_the_printed_program_reads_as_written_by_hand():
    p = mlp_topk()
    check_program(p)
    assert format_program(p) == EXPECTED



def test_header_of_a_program_with_one_output_and_no_weights_or_inputs():
    only_weights = Program(name="c", tensors=(_t("w", (2,), "weight", "param:w"), _t("y", (2,), "output")),
                           inputs=(), outputs=("y",), steps=(_k("cp", [("j", 2)], "y[j]", "=", "w[j] * 2"),))
    check_program(only_weights)
    assert format_program(only_weights).splitlines()[0] == "program c(weights w: float32[2]) -> y: float32[2]"
    scalar = Program(name="s", tensors=(_t("x", (3,), "input", "input:0"), _t("y", (), "output")),
                     inputs=("x",), outputs=("y",), steps=(_k("sum", [("j", 3)], "y[()]", "+=", "x[j]"),))
    check_program(scalar)
    assert format_program(scalar).splitlines()[0] == "program s(x: float32[3]) -> y: float32[]"


def test_a_step_printed_alone_and_the_graph_node_text():
    p = mlp_topk()
    view = p.steps[2]
    assert format_step(view, "") == ["view: y = reshape(h)"]  # no table: no target shape
    assert format_step(view, "", p.tensor_map()) == ["view: y = reshape(h, shape=[2,6])"]
    assert build_einsum_graph(p).node("view").text == "y = reshape(h, shape=[2,6])"
