"""Row L2 normalisation of a (256, 16384) matrix: x / ||x||_2 per row.

This is the normalisation used for embedding retrieval, CLIP features and
NetVLAD: a sum of squares, a sqrt and a broadcast divide per row.
It is memory-bound. It checks that torch.norm(p=2, dim=...) decomposes
into lowerable reductions.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """x / torch.norm(x, p=2, dim=1, keepdim=True)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p=2, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
