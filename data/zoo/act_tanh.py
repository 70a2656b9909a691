"""Tanh over a (256, 16384) activation.

Tanh is a transcendental elementwise op: memory-bound on every device
despite the costly special function. It is the building block of
tanh-GELU, RNN cells and LeNet-style networks.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """Tanh."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
