"""Unbiased variance over the innermost dim of a (32, 1024, 512) tensor.

A two-moment reduction (mean, then the mean of squared deviations, or a
single Welford pass). Fused it reads the input once. Unfused, the
subtract-mean pass materialises a full-size temporary. It is the
statistic behind every normalisation layer.
"""

import torch
import torch.nn as nn

BATCH = 32
DIM1 = 1024
DIM2 = 512


class Model(nn.Module):
    """torch.var(x, dim=-1) (correction = 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.var(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
