"""Softplus over a (256, 16384) activation: log(1 + exp(x)), linear above threshold 20.

It needs two transcendentals plus a threshold select per element, and is
memory-bound. It is the same op Mamba uses to make its time step dt
positive.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """Softplus."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
