"""Sum over the middle dim of a (32, 1024, 512) tensor, keepdim.

The reduced axis is not the innermost: each output sums 1024 values
512 floats apart. A good kernel still streams the 64 MiB input once (the
reads are coalesced across the inner dim), and the output is 1024x
smaller. So the op is read-bandwidth-bound. This is the KernelBench
"sum over a dim" case.
"""

import torch
import torch.nn as nn

BATCH = 32
DIM1 = 1024
DIM2 = 512


class Model(nn.Module):
    """torch.sum(x, dim=1, keepdim=True)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
