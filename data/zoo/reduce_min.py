"""Min over the innermost dim of a (32, 1024, 512) tensor, values only.

This is the mirror of reduce_max on a contiguous axis. It is
read-bandwidth-bound, and checks min.dim / amin lowering.
"""

import torch
import torch.nn as nn

BATCH = 32
DIM1 = 1024
DIM2 = 512


class Model(nn.Module):
    """torch.min(x, dim=2)[0]."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=2)[0]


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
