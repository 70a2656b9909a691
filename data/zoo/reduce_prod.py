"""Product over dim 1 of a (32, 256, 2048) tensor of values near 1.

This is a multiplicative reduction, the same traffic pattern as sum but
a different combine op (aten.prod has no core-ATen decomposition into
sum). Inputs are 1 + 0.05 * N(0, 1) so the 256-term product stays finite
and well away from zero. It is read-bandwidth-bound.
"""

import torch
import torch.nn as nn

BATCH = 32
DIM1 = 256
DIM2 = 2048


class Model(nn.Module):
    """torch.prod(x, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=1)


def get_inputs():
    return [1.0 + 0.05 * torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
