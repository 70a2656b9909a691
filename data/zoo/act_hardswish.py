"""HardSwish over a (256, 16384) activation: x * clamp(x + 3, 0, 6) / 6.

This is MobileNetV3's cheap Swish. It is piecewise polynomial with no
transcendental and is memory-bound. It checks the hardswish decomposition.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """HardSwish."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardswish(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
