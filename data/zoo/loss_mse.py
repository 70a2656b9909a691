"""Mean-squared-error loss between two (128, 32768) tensors: mean((p - t)^2).

It reads both inputs once (32 MiB) and reduces to a scalar: a sub,
a square and a full reduction. It is read-bandwidth-bound, and the
scalar output makes it a grid-wide reduction on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
DIM = 32768


class Model(nn.Module):
    """F.mse_loss(predictions, targets) with mean reduction."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(predictions, targets)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
