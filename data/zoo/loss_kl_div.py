"""KL-divergence loss between two (256, 16384) probability distributions (batchmean).

The model takes log(predictions) and calls F.kl_div, i.e.
sum(t * (log t - log p)) / batch. It does two logs, a multiply and a
full reduction per element, and is read-bandwidth-bound. Both inputs are
row-softmaxed in get_inputs, so they are valid distributions. The
distillation loss.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """F.kl_div(log(predictions), targets, reduction='batchmean')."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


def get_inputs():
    predictions = torch.randn(BATCH, DIM).softmax(dim=-1)
    targets = torch.randn(BATCH, DIM).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []
