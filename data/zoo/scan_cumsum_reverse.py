"""Reverse (suffix) cumulative sum along rows of a (128, 16384) matrix.

out[i] = sum_{j >= i} x[j], written as flip -> cumsum -> flip. Each flip
materialises a reversed copy in eager PyTorch, so eager traffic is 3x
the one-read-one-write minimum of a scan that runs backwards. This is
the "returns-to-go" computation in RL.
"""

import torch
import torch.nn as nn

BATCH = 128
LENGTH = 16384


class Model(nn.Module):
    """torch.cumsum(x.flip(1), 1).flip(1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(1), dim=1).flip(1)


def get_inputs():
    return [torch.randn(BATCH, LENGTH)]


def get_init_inputs():
    return []
