"""Each lowering family, traced and validated against PyTorch on tiny inputs.

Small shapes keep numba compiles cheap; the zoo (data/zoo) exercises the same lowerings at
realistic sizes through `solar coverage`.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from solar_assets.golden import make_golden
from solar_assets.translate import trace_torch
from solar_assets.validate import validate_program
from solar_assets.workloads import read_workload_source

CASES = {
    "scans": ("x", "torch.randn(3, 7)",
              "torch.cumsum(x, 1) + torch.cumprod(x * 0.5, 0).flip(0)"),
    "conv_transposed": ("x", "torch.randn(2, 4, 5, 6)",
                        "torch.nn.functional.conv_transpose2d(x, self.w, self.b, stride=2, padding=1, output_padding=1)"),
    "conv_grouped_dilated": ("x", "torch.randn(2, 4, 9, 9)",
                             "torch.nn.functional.conv2d(x, self.g, None, stride=2, padding=2, dilation=2, groups=2)"),
    "conv_of_broadcast_batch": ("x", "torch.randn(1, 4, 5, 6)",
                                "torch.nn.functional.conv2d(x.expand(3, -1, -1, -1), self.g, None, padding=1, groups=2)"),
    "conv_pads_an_unsqueezed_row": ("x", "torch.randn(2, 4, 6)",
                                    "torch.nn.functional.conv2d(x.unsqueeze(2), self.g, None, padding=1, groups=2)"),
    "adaptive_unequal": ("x", "torch.randn(2, 3, 7, 5)",
                         "torch.nn.functional.adaptive_avg_pool2d(x, (3, 2)) + torch.nn.functional.adaptive_max_pool2d(x, (3, 2))"),
    "group_norm": ("x", "torch.randn(2, 6, 4, 3)", "torch.nn.functional.group_norm(x, 3, self.gw, self.gb)"),
    "instance_norm": ("x", "torch.randn(2, 6, 4, 3)", "torch.nn.functional.instance_norm(x)"),
    "arg_reductions": ("x", "torch.randn(4, 9)",
                       "torch.argmax(x, 1) * 10 + torch.argmin(x, 0).sum() + x.max(dim=1).indices"),
    "var_norms": ("x", "torch.randn(5, 8)",
                  "x.var(dim=1, keepdim=True) + torch.linalg.vector_norm(x, 2, dim=1, keepdim=True) + x.norm(p=1) + x.prod()"),
    "movement": ("x", "torch.randn(4, 6)",
                 "torch.cat([a.repeat(2, 1) for a in x.split([2, 4], dim=1)], dim=1)[:, :5] + "
                 "torch.nn.functional.pad(x, (1, 0, 0, 4))[:8, 1:6]"),
    "rank0_and_where": ("x", "torch.randn(3, 4)",
                        "torch.where(x > x.mean(), x, torch.full_like(x, 2.0)) + torch.arange(4) + torch.isnan(x).float()"),
    "elu_family": ("x", "torch.randn(3, 5)",
                   "torch.nn.functional.elu(x) + torch.nn.functional.selu(x) + torch.nn.functional.leaky_relu(x, 0.2) + torch.nn.functional.hardtanh(x)"),
}


def _workload(tmp_path: Path, name: str, arg: str, make: str, expr: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(f"""
        import torch
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.randn(4, 3, 3, 3))
                self.b = torch.nn.Parameter(torch.randn(3))
                self.g = torch.nn.Parameter(torch.randn(6, 2, 3, 3))
                self.gw = torch.nn.Parameter(torch.randn(6))
                self.gb = torch.nn.Parameter(torch.randn(6))
            def forward(self, {arg}):
                return {expr}
        def get_inputs(): return [{make}]
        def get_init_inputs(): return []
    """))
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowering_validates_against_pytorch(tmp_path, name):
    src = read_workload_source(_workload(tmp_path, name, *CASES[name]))
    translation = trace_torch(src)
    result = validate_program(translation.program, make_golden(src), source=src.path)
    assert result.ok, str(result)
