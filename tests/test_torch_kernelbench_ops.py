"""KernelBench ops that need their own lowering: the any.dim of the attention decomposition
(scaled_dot_product_attention, nn.MultiheadAttention), Tensor.unfold (ViT patching) and
as_strided (Swin's adaptive pooling). Each workload is validated against PyTorch and, where
FlopCounterMode counts the op, its MACs are half of FlopCounterMode's FLOPs."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from solar_assets.coverage.flop_reference import flop_counter_flops, solar_macs
from solar_assets.golden import make_golden
from solar_assets.translate import trace_torch
from solar_assets.validate import validate_program
from solar_assets.workloads import read_workload_source

WORKLOADS = {
    "sdpa": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Model(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, q, k, v):
                return F.scaled_dot_product_attention(q, k, v)

        batch_size = 2
        num_heads = 3
        seq_len = 6
        head_dim = 4

        def get_inputs():
            shape = (batch_size, num_heads, seq_len, head_dim)
            return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]

        def get_init_inputs():
            return []
    """,
    "multihead_attention": """
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self, embed_dim, num_heads):
                super().__init__()
                self.attn = nn.MultiheadAttention(embed_dim, num_heads)

            def forward(self, x):
                out, _ = self.attn(x, x, x)
                return out

        seq_len = 5
        batch_size = 2
        embed_dim = 8
        num_heads = 2

        def get_inputs():
            return [torch.randn(seq_len, batch_size, embed_dim)]

        def get_init_inputs():
            return [embed_dim, num_heads]
    """,
    "patch_unfold": """
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self, patch_size, channels, dim):
                super().__init__()
                self.patch_size = patch_size
                self.proj = nn.Linear(patch_size * patch_size * channels, dim)

            def forward(self, img):
                p = self.patch_size
                x = img.unfold(2, p, p).unfold(3, p, p)
                x = x.reshape(img.shape[0], -1, p * p * img.shape[1])
                return self.proj(x)

        batch_size = 2
        channels = 3
        image_size = 8
        patch_size = 4
        dim = 5

        def get_inputs():
            return [torch.randn(batch_size, channels, image_size, image_size)]

        def get_init_inputs():
            return [patch_size, channels, dim]
    """,
    "strided_windows": """
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self, features):
                super().__init__()
                self.w = nn.Parameter(torch.randn(features, features))
                self.pool = nn.AdaptiveAvgPool1d(1)

            def forward(self, x):
                windows = torch.as_strided(x, (rows - 2, 3, features), (features, features, 1))
                pooled = self.pool(x.t().unsqueeze(0)).squeeze(0)
                # strides no base dim steps without a carry: read through the flat storage
                diagonal = torch.as_strided(x, (rows - 3, features), (features + 1, 1)).sum()
                return torch.matmul(windows, self.w).sum(1) + pooled.t() + diagonal

        rows = 7
        features = 4

        def get_inputs():
            return [torch.randn(rows, features)]

        def get_init_inputs():
            return [features]
    """,
    "any_all": """
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, x):
                rows = torch.any(x > 0.5, dim=1, keepdim=True)
                cols = torch.all(x > -1.0, dim=0)
                return rows.float() * 2.0 + cols.float() + torch.any(x > 2.0).float()

        rows = 5
        cols = 6

        def get_inputs():
            return [torch.randn(rows, cols)]

        def get_init_inputs():
            return []
    """,
}
# MACs per workload that FlopCounterMode counts (it counts no reduction or elementwise op)
COUNTED = ["sdpa", "multihead_attention", "patch_unfold", "strided_windows"]


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(WORKLOADS[name]))
    return path


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_kernelbench_op_validates_against_pytorch(tmp_path, name):
    src = read_workload_source(_write(tmp_path, name))
    translation = trace_torch(src)
    result = validate_program(translation.program, make_golden(src), source=src.path)
    assert result.ok, str(result)


@pytest.mark.parametrize("name", COUNTED)
def test_kernelbench_op_macs_are_half_of_flop_counter(tmp_path, name):
    path = _write(tmp_path, name)
    flops, per_op = flop_counter_flops(path)
    assert flops > 0, per_op
    assert 2 * solar_macs(path) == flops, per_op


def test_unfold_and_as_strided_are_views():
    """No copy kernel: the patches and the windows are read through index maps."""
    import torch

    from solar_assets.translate.torch_tracer import export_graph, lower_exported

    class Model(torch.nn.Module):
        def forward(self, x):
            return x.unfold(1, 2, 2).sum(-1) + torch.as_strided(x, (3, 3), (4, 1), 1)[:, :2].sum(-1, keepdim=True)

    x = torch.randn(3, 4)
    program = lower_exported(export_graph(Model(), [x], "views"), "views", "views")
    kinds = [s.update for s in program.steps]
    assert kinds.count("=") == 1, [(s.name, s.out, s.update, s.expr) for s in program.steps]  # only the add
