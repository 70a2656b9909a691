"""The lowering core: one scalar vocabulary, one canonical elementwise table reached from both
frontends, and the ops that once were JAX-only now validated for PyTorch too."""
from __future__ import annotations

import textwrap

import pytest

from ir_schemas import Kernel, Loop
from solar_assets.execute.codegen import IMPLEMENTED
from solar_assets.ir.expr import SCALAR_FUNCTIONS, parse_kernel
from solar_assets.translate.core.elementwise import ARITY, ELEMENTWISE


def test_code_generator_implements_exactly_the_ir_scalar_functions():
    assert IMPLEMENTED == set(SCALAR_FUNCTIONS)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_canonical_template_is_an_ir_expression(name):
    """Each template, filled with reads, parses as a kernel expression (IR vocabulary only)."""
    reads = [f"X{k}[i]" for k in range(ARITY[name])]
    kernel = Kernel(name="k", loops=(Loop(var="i", extent=4),), out="Y[i]", update="=",
                    expr=ELEMENTWISE[name].format(*reads))
    pk = parse_kernel(kernel)
    assert {a.tensor for a in pk.reads} == {f"X{k}" for k in range(ARITY[name])}


def test_both_frontends_alias_the_canonical_names():
    from solar_assets.translate.jax_lowering import elementwise as jax_ew
    from solar_assets.translate.torch_lowering import elementwise as torch_ew

    for table in (torch_ew.ALIASES, jax_ew.ALIASES, jax_ew.BOOLEAN):
        assert set(table.values()) <= set(ELEMENTWISE)
    # the ops that were JAX-only: now reachable from ATen too, under the same canonical names
    once_jax_only = {"tan", "sinh", "cosh", "erfc", "exp2", "asinh", "acosh", "atanh", "square", "is_finite"}
    assert once_jax_only <= set(torch_ew.ALIASES.values())
    # fmod is lowered one way: aten.fmod and lax.rem are the same canonical op
    assert torch_ew.ALIASES[torch_ew.aten.fmod] == jax_ew.ALIASES["rem"] == "fmod"


def test_once_jax_only_ops_validate_for_pytorch(tmp_path):
    from solar_assets.golden import make_golden
    from solar_assets.translate import trace_torch
    from solar_assets.validate import validate_program
    from solar_assets.workloads import read_workload_source

    path = tmp_path / "jax_only_ops.py"
    path.write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, x):
                y = torch.tan(x * 0.5) + torch.sinh(x) + torch.cosh(x) + torch.erfc(x) + torch.exp2(x)
                y = y + torch.asinh(x) + torch.acosh(x.abs() + 1.0) + torch.atanh(x * 0.3)
                y = y + torch.square(x) + torch.isfinite(x / (x - x)).float() + torch.trunc(x * 3.0)
                y = y + torch.div(x * 3.0, 0.7, rounding_mode="floor") + torch.div(x * 3.0, 0.7, rounding_mode="trunc")
                n = torch.arange(20).view(rows, cols) - 9
                q = torch.div(n, 4, rounding_mode="trunc") + torch.div(n, 4, rounding_mode="floor") + n % 4
                return y + torch.round(x * 4.0) + torch.fmod(x * 5.0, 1.5) + torch.remainder(x * 5.0, 1.5) + q

        rows = 4
        cols = 5

        def get_inputs():
            return [torch.randn(rows, cols)]

        def get_init_inputs():
            return []
    """))
    src = read_workload_source(path)
    translation = trace_torch(src)
    result = validate_program(translation.program, make_golden(src), source=src.path)
    assert result.ok, str(result)


def test_padding_a_slice_reads_the_pad_value_not_its_neighbour(tmp_path):
    """A zero-padded conv of ``x[:, :, 1:, 1:]``: the read just before the slice is padding, not
    the base's row 0 (a slice is copied before it gets a pad value)."""
    from solar_assets.golden import make_golden
    from solar_assets.translate import trace_torch
    from solar_assets.validate import validate_program
    from solar_assets.workloads import read_workload_source

    path = tmp_path / "slice_pad.py"
    path.write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Model(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.w = nn.Parameter(torch.randn(2, channels, 3, 3))

            def forward(self, x):
                return F.conv2d(x[:, :, 1:, 1:], self.w, padding=1) + F.pad(x[:, :, :4, 2:], (1, 1, 1, 1)).sum()

        channels = 3
        size = 6

        def get_inputs():
            return [torch.randn(1, channels, size, size)]

        def get_init_inputs():
            return [channels]
    """))
    src = read_workload_source(path)
    result = validate_program(trace_torch(src).program, make_golden(src), source=src.path)
    assert result.ok, str(result)
