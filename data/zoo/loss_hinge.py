"""Hinge loss for +/-1 labels: mean(clamp(1 - predictions * targets, min=0)).

Predictions are (4096, 1024) scores. The targets are +/-1 labels
(torch.randint(0, 2) * 2 - 1, as float) of the same shape. It uses a
multiply, a subtract, a clamp and a full mean: memory-bound, the SVM loss.
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 1024


class Model(nn.Module):
    """torch.mean(torch.clamp(1 - predictions * targets, min=0))."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    predictions = torch.randn(BATCH, DIM)
    targets = torch.randint(0, 2, (BATCH, DIM)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
