"""ReLU over a (256, 16384) activation: y = max(x, 0).

One compare-select per element with one read and one write
(intensity ~0.03 FLOP/byte), so ReLU is the simplest memory-bound op.
Its bound is 2 * 16 MiB / bandwidth. It is the reference point for every
elementwise epilogue in this zoo.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """ReLU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
