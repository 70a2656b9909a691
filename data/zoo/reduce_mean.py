"""Mean over the innermost dim of a (32, 1024, 512) tensor.

This is a contiguous row reduction (512 values per output) followed by a
scale. It is read-bandwidth-bound. Next to reduce_sum it checks that the
reduced axis position does not change the compulsory traffic.
"""

import torch
import torch.nn as nn

BATCH = 32
DIM1 = 1024
DIM2 = 512


class Model(nn.Module):
    """torch.mean(x, dim=2)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=2)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
