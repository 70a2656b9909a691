"""Mish over a (256, 16384) activation: x * tanh(softplus(x)).

It chains three transcendentals per element (exp, log1p, tanh): the most
"compute-heavy" activation here. Even so, the intensity is a few
FLOP/byte, under the ridge point of modern GPUs, so it stays
memory-bound.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """Mish."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.mish(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
