"""Triplet-margin loss (margin 1, p = 2) on (4096, 512) anchor/positive/negative embeddings.

It computes two row-wise L2 distances (pairwise_distance adds eps before
the norm), then clamp(d_ap - d_an + margin, 0) and a mean. Three inputs
are read once each (24 MiB). It is memory-bound, and the metric-learning
loss of face and re-ID models.
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 512


class Model(nn.Module):
    """nn.TripletMarginLoss(margin=1.0, p=2)."""

    def __init__(self):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=1.0, p=2)

    def forward(self, anchor, positive, negative):
        return self.loss(anchor, positive, negative)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
