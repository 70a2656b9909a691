"""Argmax over dim 1 of a (32, 1024, 512) tensor; the output is int64 indices.

This is an index-returning reduction: it reads 64 MiB of float32 and
writes 16384 int64 values. The output dtype differs from the input, so
the byte count must use 8 bytes per output element. This is the op
behind greedy decoding and classification accuracy.
"""

import torch
import torch.nn as nn

BATCH = 32
DIM1 = 1024
DIM2 = 512


class Model(nn.Module):
    """torch.argmax(x, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
