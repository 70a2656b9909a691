"""A reduction over a broadcast dimension (``x.expand(n, d).sum(0)``, the bias gradient of a
backward graph) adds ``n`` copies of one term: the tracer scales the term instead of looping
(``translate.core.builder.fold_idle_loops``), so it validates and costs what the computation needs.
Before, the checker refused the kernel's idle loop and the workload produced no bounds."""
from __future__ import annotations

import pytest

from solar_assets.golden import make_golden
from solar_assets.graph import build_einsum_graph
from solar_assets.translate import trace_torch
from solar_assets.translate.core.builder import fold_idle_loops
from solar_assets.validate import validate_program
from solar_assets.workloads import read_workload_source

WORKLOAD = '''
import torch
import torch.nn as nn

rows = 64
dim = 128


class Model(nn.Module):
    """Sums and maxes a row broadcast to a matrix, as a bias gradient does."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        wide = x.expand(rows, dim)
        return wide.sum(dim=0) + wide.amax(dim=0)


def get_inputs():
    return [torch.randn(dim)]


def get_init_inputs():
    return []
'''


def test_a_reduction_over_a_broadcast_validates_and_counts_one_term(tmp_path):
    path = tmp_path / "broadcast_sum.py"
    path.write_text(WORKLOAD)
    src = read_workload_source(path)
    program = trace_torch(src).program
    result = validate_program(program, make_golden(src), source=src.path)
    assert result.ok, result.summary()
    graph = build_einsum_graph(program)
    # per output element: the sum is one multiply (64 × x) and its accumulate, the max one
    # compare, the add one op; no kernel loops over the 64 broadcast rows (64 × 128 = 8192 ops each)
    assert graph.flops == (2 + 1 + 1) * 128, graph.flops


@pytest.mark.parametrize("update,expr", [("+=", "4 * (x[j])"), ("max=", "x[j]"), ("*=", "pow(x[j], 4)")])
def test_fold_by_update(update, expr):
    assert fold_idle_loops([("i", 4), ("j", 8)], "y[j]", update, "x[j]", None) == ([("j", 8)], expr)


def test_a_loop_the_expression_uses_is_kept():
    loops = [("i", 4), ("j", 8)]
    assert fold_idle_loops(loops, "y[j]", "+=", "x[j] * i", None) == (loops, "x[j] * i")
    assert fold_idle_loops(loops, "y[j]", "+=", "x[i, j]", None) == (loops, "x[i, j]")
    assert fold_idle_loops(loops, "y[j]", "=", "x[j]", None) == (loops, "x[j]")  # not a reduction
