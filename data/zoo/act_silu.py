"""SiLU (a.k.a. Swish) over a (256, 16384) activation: y = x * sigmoid(x).

The gated-linear-unit activation of LLaMA-style MLPs and EfficientNet.
It does one transcendental and a multiply per element and is
memory-bound. Export decomposes F.silu into sigmoid and mul, which should
cost the same traffic as one fused elementwise pass.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """SiLU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
