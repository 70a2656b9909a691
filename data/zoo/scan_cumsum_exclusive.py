"""Exclusive prefix sum along rows of a (128, 16384) matrix.

out[i] = sum_{j < i} x[j]: shift right by one with a leading zero
(F.pad, then a slice), then an inclusive cumsum. The pad materialises a
shifted copy, so eager does two full passes where a scan kernel would
do one. This is the offset computation of stream compaction and
radix sort.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
LENGTH = 16384


class Model(nn.Module):
    """cumsum(pad(x, (1, 0))[:, :-1], dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shifted = F.pad(x, (1, 0))[:, :-1]
        return torch.cumsum(shifted, dim=1)


def get_inputs():
    return [torch.randn(BATCH, LENGTH)]


def get_init_inputs():
    return []
