"""Row logsumexp over a (4096, 8192) matrix: log(sum(exp(x), dim=1)).

This is the stable reduction inside softmax cross-entropy and attention
normalisers. It is a max pass and an exp-sum pass, with a tiny output,
and is read-bandwidth-bound. Export decomposes it into amax, sub, exp,
sum, log and add, so unfused it reads the input twice.
"""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 8192


class Model(nn.Module):
    """torch.logsumexp(x, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
