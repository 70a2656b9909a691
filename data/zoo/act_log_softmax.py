"""Row log-softmax over a (256, 16384) activation (dim=1).

It computes x - max - log(sum(exp(x - max))): two row reductions and an
elementwise pass, memory-bound like softmax. It is the numerically stable
front half of cross-entropy, and checks lowering of
_log_softmax next to _softmax.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """LogSoftmax(dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
