"""Inclusive prefix sum along rows of a (128, 16384) matrix.

A scan has a loop-carried dependence, but a work-efficient parallel scan
does O(n) adds and can still stream the data once. So the
Speed-of-Light bound is one read and one write (memory-bound). It
checks that the analysis does not treat the scan as O(n^2) (the naive
"each output sums its prefix" reading).
"""

import torch
import torch.nn as nn

BATCH = 128
LENGTH = 16384


class Model(nn.Module):
    """torch.cumsum(x, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, LENGTH)]


def get_init_inputs():
    return []
