"""Binary cross-entropy with logits for (4096, 1024) multi-label scores and {0, 1} targets.

Stable form: (1 - t) * x - min(x, 0) + log1p(exp(-|x|)).
It has several transcendentals per element and a full mean, and is
memory-bound. Targets are drawn with torch.randint and cast to float.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
NUM_LABELS = 1024


class Model(nn.Module):
    """F.binary_cross_entropy_with_logits(logits, targets)."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, targets)


def get_inputs():
    logits = torch.randn(BATCH, NUM_LABELS)
    targets = torch.randint(0, 2, (BATCH, NUM_LABELS)).float()
    return [logits, targets]


def get_init_inputs():
    return []
