"""HardTanh over a (256, 16384) activation: clamp(x, -1, 1).

Two compares per element, purely memory-bound. It is the clamp epilogue
behind ReLU6 and quantisation-friendly activations.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """HardTanh(-1, 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardtanh(x, min_val=-1.0, max_val=1.0)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
