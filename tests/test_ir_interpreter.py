"""One walk of a kernel expression (issue 29 item 3): the parser's check, the code generator and the
point evaluator are ``ExprInterpreter`` subclasses, and a new analysis is one more subclass."""
from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from solar_assets.errors import IRError
from solar_assets.execute import codegen
from solar_assets.ir import expr
from solar_assets.ir.interpreter import ExprInterpreter
from solar_assets.validate import points


def test_the_three_readers_of_an_expression_subclass_the_one_walk():
    for cls in (expr._Check, codegen._Emitter, points._ArrayValues):
        assert issubclass(cls, ExprInterpreter), cls
        assert "run" not in vars(cls)  # the dispatch is the base's, never re-implemented
    for module in (codegen, points):  # neither parses a read itself: the walk hands it over parsed
        assert "parse_access" not in inspect.getsource(module)


def test_a_new_analysis_is_one_subclass():
    class Reads(ExprInterpreter[list]):
        """Every tensor read, in evaluation order."""

        def constant(self, value):
            return []

        def name(self, name):
            return []

        def read(self, access, node):
            return [str(access)]

        def binary(self, op, left, right, node):
            return self.run(left) + self.run(right)

        def call(self, name, args, node):
            return [r for a in args for r in self.run(a)]

    node = ast.parse("exp(A[i, k] * B[k, j + 1]) + C[I[i, 0] + 2]", mode="eval").body
    assert Reads({"i", "j", "k"}, "k1").run(node) == ["A[i, k]", "B[k, j + 1]", "C[I[i, 0] + 2]"]
    with pytest.raises(IRError, match="k1: Compare"):  # a construct the subclass does not define
        Reads({"i"}, "k1").run(ast.parse("A[i] < 1", mode="eval").body)


def test_each_reader_gives_its_own_meaning_to_one_expression():
    from ir_schemas import Kernel, Loop, Program, TensorDecl

    kernel = Kernel(name="k", loops=[Loop(var="i", extent=4)], out="Y[i]", update="=",
                    expr="select(X[i] > 0, sqrt(X[i]), -X[i]) + 1")
    program = Program(name="p", tensors=[TensorDecl(name="X", shape=[4], dtype="float32", role="input"),
                                         TensorDecl(name="Y", shape=[4], dtype="float32", role="output")],
                      steps=[kernel], inputs=["X"], outputs=["Y"])
    parsed = expr.parse_kernel(kernel)
    assert parsed.ops_per_iteration == expr._Check({"i"}, "k", []).run(parsed.expr) == 5  # > sqrt - + select
    source = codegen.kernel_source(parsed, program)
    assert "math.sqrt(" in source and " if " in source  # select as a branch, not both sides evaluated
    x = np.array([4.0, -1.0, 0.0, 9.0])
    evaluator = points.PointEvaluator(program, program.steps, lambda name: x)
    assert np.allclose(evaluator.whole("Y"), np.where(x > 0, np.sqrt(np.abs(x)), -x) + 1)
