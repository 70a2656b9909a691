"""Masked prefix sum: cumsum of x where a boolean mask is set (zeros elsewhere).

The mask is a bool input (1 byte per element), so compulsory traffic is
4 + 1 bytes read and 4 bytes written per element. This checks that the
analysis counts the mask's true dtype size. The masking multiply is a
fusible prologue to the scan.
"""

import torch
import torch.nn as nn

BATCH = 128
LENGTH = 16384


class Model(nn.Module):
    """torch.cumsum(x * mask, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=1)


def get_inputs():
    x = torch.randn(BATCH, LENGTH)
    mask = torch.rand(BATCH, LENGTH) > 0.5
    return [x, mask]


def get_init_inputs():
    return []
