"""Linear -> Dropout(p=0.1, eval) -> Softmax over (512, 8192) logits.

In eval mode dropout is the identity, which export drops or turns into a
clone, so the bound must not charge it. The softmax epilogue needs a row
reduction over the full GEMM output row (8192 wide). That makes it
harder to fuse than a pointwise epilogue. The GEMM is 2 * 512 * 1024 *
8192 = 8.6 GFLOP.
"""

import torch
import torch.nn as nn

BATCH = 512
IN_FEATURES = 1024
OUT_FEATURES = 8192


class Model(nn.Module):
    """softmax(dropout(linear(x)), dim=-1) in eval mode."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(p=0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.dropout(self.linear(x)), dim=-1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
