"""The PyTorch tracer: structure of the IR it emits, and how it reports what it cannot lower."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ir_schemas import Kernel, Reshape
from solar_assets.ir import parse_kernel
from solar_assets.translate import TranslationError, trace_torch
from solar_assets.workloads import read_workload_source

WORKLOADS = Path(__file__).resolve().parents[1] / "data" / "workloads"


def _write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


def _trace(path: Path):
    return trace_torch(read_workload_source(path)).program


def test_gemm_is_one_sum_of_products_kernel():
    program = _trace(WORKLOADS / "gemm.py")
    kernels = [s for s in program.steps if isinstance(s, Kernel)]
    assert len(kernels) == 1
    pk = parse_kernel(kernels[0])
    assert pk.is_sum_of_products and pk.iterations == 1024**3
    assert program.outputs == ("mm",) and program.tensor("mm").role == "output"


def test_permute_and_split_views_fold_into_subscripts(tmp_path):
    path = _write(tmp_path, "views", """
        import torch
        class Model(torch.nn.Module):
            def forward(self, x):
                y = x.view(2, 3, 4).permute(2, 0, 1)
                return torch.exp(y)
        def get_inputs(): return [torch.randn(6, 4)]
        def get_init_inputs(): return []
    """)
    program = _trace(path)
    (kernel,) = program.steps
    assert isinstance(kernel, Kernel)
    # y[i0, i1, i2] = x.view(2,3,4)[i1, i2, i0] = x[i1*3 + i2, i0]: no copy kernel for the views
    assert kernel.expr == "exp(x[i2 + i1*3, i0])"


def test_clone_of_a_permuted_view_is_a_real_copy(tmp_path):
    path = _write(tmp_path, "contig", """
        import torch
        class Model(torch.nn.Module):
            def forward(self, x):
                return x.transpose(0, 1).contiguous().view(-1) * 2.0
        def get_inputs(): return [torch.randn(3, 5)]
        def get_init_inputs(): return []
    """)
    program = _trace(path)
    kinds = [type(s).__name__ for s in program.steps]
    assert kinds == ["Kernel", "Reshape", "Kernel"]
    assert program.steps[0].expr == "x[i1, i0]"
    assert isinstance(program.steps[1], Reshape)


def test_conv_with_padding_declares_the_pad_value():
    program = _trace(WORKLOADS / "conv2d_bias_relu.py")
    assert program.tensor("x").pad_value == 0.0
    conv = next(s for s in program.steps if isinstance(s, Kernel) and s.update == "+=")
    assert "p0 + r0 - 1" in conv.expr


def test_a_batch_broadcast_conv_input_is_padded_in_place(tmp_path):
    """A window leaves only the spatial dims, so an input expanded over the batch keeps its view:
    the pad value goes on the base tensor and no copy is charged (a size-1 or broadcast dim that
    is padded would need one: see the lowering cases)."""
    path = _write(tmp_path, "bcast_conv", """
        import torch
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(4, 6, 3, padding=1)
            def forward(self, x):
                return self.conv(x.expand(3, -1, -1, -1))
        def get_inputs(): return [torch.randn(1, 4, 5, 6)]
        def get_init_inputs(): return []
    """)
    program = _trace(path)
    assert program.tensor("x").pad_value == 0.0
    kernels = [s for s in program.steps if isinstance(s, Kernel)]
    assert [k.name for k in kernels] == ["convolution_bias", "convolution"]
    assert kernels[1].expr.startswith("x[0, c, p0 + r0 - 1, p1 + r1 - 1] * ")


def test_unknown_op_is_named_with_the_file(tmp_path):
    path = _write(tmp_path, "airy", """
        import torch
        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.special.airy_ai(x)
        def get_inputs(): return [torch.randn(4, 8)]
        def get_init_inputs(): return []
    """)
    with pytest.raises(TranslationError, match=r"airy\.py: no lowering for aten\.special_airy_ai"):
        _trace(path)


def test_a_broken_file_is_reported_with_its_path(tmp_path):
    path = _write(tmp_path, "broken", "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x) return x\n")
    with pytest.raises(Exception, match=r"broken\.py: executing the file failed: SyntaxError"):
        _trace(path)
