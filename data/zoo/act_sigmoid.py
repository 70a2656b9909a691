"""Sigmoid over a (256, 16384) activation: y = 1 / (1 + exp(-x)).

It uses one transcendental per element. Its FLOP count depends on how an
analysis prices exp (1 op vs ~10-20 FLOPs), but the intensity stays far
below any ridge point, so the bound is bandwidth. It checks that
special-function cost does not flip the regime.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """Sigmoid."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
