"""Smooth-L1 (Huber, beta = 1) loss between two (128, 32768) tensors.

It is quadratic for |d| < 1 and linear beyond, so there is a select per
element before a full mean reduction. It is read-bandwidth-bound. It
checks that the piecewise branch decomposes into abs/lt/where and
lowers.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
DIM = 32768


class Model(nn.Module):
    """F.smooth_l1_loss(predictions, targets, beta=1.0)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets, beta=1.0)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
