"""Tanh-approximate GELU over a (256, 16384) activation (GPT-2's activation).

y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))). It does a
handful of FLOPs and a tanh per element, still memory-bound. Paired with
act_gelu_exact and act_gelu_tanh_manual, it checks that the approximate
variant is recognised through the `approximate` argument.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """GELU (tanh approximation)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate='tanh')


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
