"""SELU over a (256, 16384) activation: scale * (x if x > 0 else alpha * (exp(x) - 1)).

It has self-normalising constants and a branch per element (a select
after decomposition). It is memory-bound, and checks elu-family
decompositions (exp, expm1, where, mul).
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """SELU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
