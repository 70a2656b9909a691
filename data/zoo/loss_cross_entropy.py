"""Cross-entropy over 1000 classes for a batch of 4096 logits, with int64 class targets.

log_softmax over each row, then a gather of the target column (nll_loss)
and a mean. The logits (16 MiB) dominate traffic, and the targets are
int64 indices drawn with torch.randint. It tests gather-style indexing by
a data tensor: the read of logp[i, target[i]] touches one element per
row.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
NUM_CLASSES = 1000


class Model(nn.Module):
    """F.cross_entropy(logits, targets) with mean reduction."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


def get_inputs():
    logits = torch.randn(BATCH, NUM_CLASSES)
    targets = torch.randint(0, NUM_CLASSES, (BATCH,))
    return [logits, targets]


def get_init_inputs():
    return []
