"""Argmin over the innermost dim of a (32, 1024, 512) tensor; int64 output.

This is the mirror of reduce_argmax on a contiguous axis. It is
read-bandwidth-bound, and checks argmin lowering and int64 outputs.
"""

import torch
import torch.nn as nn

BATCH = 32
DIM1 = 1024
DIM2 = 512


class Model(nn.Module):
    """torch.argmin(x, dim=2)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=2)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
