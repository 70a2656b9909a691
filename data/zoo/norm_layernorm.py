"""LayerNorm over the hidden dim of a (32, 512, 1024) token tensor.

Each of the 16384 rows of 1024 values needs a mean and a variance (two
reductions, or one Welford pass) then an elementwise affine. Fused
that is one read and one write of 64 MiB, so the op is memory-bound. An
unfused decomposition re-reads the row for each statistic. This is the
normalisation of every transformer block.
"""

import torch
import torch.nn as nn

BATCH = 32
SEQ_LEN = 512
HIDDEN = 1024


class Model(nn.Module):
    """nn.LayerNorm(HIDDEN) with elementwise affine."""

    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
