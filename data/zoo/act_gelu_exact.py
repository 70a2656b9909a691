"""Exact (erf-based) GELU over a (256, 16384) activation.

y = 0.5 * x * (1 + erf(x / sqrt(2))), the default nn.GELU of BERT/ViT.
It uses an erf per element and is memory-bound. It tests that erf is a
known elementwise op and not an unlowerable special function.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """GELU (erf)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate='none')


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
