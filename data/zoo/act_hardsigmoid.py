"""HardSigmoid over a (256, 16384) activation: clamp(x / 6 + 1 / 2, 0, 1).

A piecewise-linear sigmoid used by MobileNetV3. It has no transcendental,
only an add, a divide and a clamp. It is memory-bound, and tests lowering
of the clamp-based decomposition.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """HardSigmoid."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardsigmoid(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
