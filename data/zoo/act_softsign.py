"""Softsign over a (256, 16384) activation: x / (1 + |x|).

F.softsign is written in Python as three ops (abs, add, div), so eager
runs it unfused with two temporaries. The fused bound is one read and
one write.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """Softsign."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softsign(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
