"""Max over dim 1 of a (32, 1024, 512) tensor, values only (torch.max(x, dim)[0]).

torch.max with a dim returns (values, indices). Taking [0] leaves the
indices dead, but export keeps a single aten.max.dim node that produces
both. An analysis must decide whether to charge the unused int64 index
output (a real kernel writes it; the Speed-of-Light minimum does not).
It is read-bandwidth-bound.
"""

import torch
import torch.nn as nn

BATCH = 32
DIM1 = 1024
DIM2 = 512


class Model(nn.Module):
    """torch.max(x, dim=1)[0]."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=1)[0]


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
