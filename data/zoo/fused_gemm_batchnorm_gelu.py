"""Linear -> BatchNorm1d (eval) -> GELU over a (1024, 2048) -> (1024, 4096) projection.

In eval mode the BatchNorm is a per-feature affine that can be folded
into the GEMM's weights and bias. The GELU is an elementwise epilogue.
Unfused there are three full passes over the 16 MiB output. The
running stats are randomised at construction so the BN is not an
identity.
"""

import torch
import torch.nn as nn

BATCH = 1024
IN_FEATURES = 2048
OUT_FEATURES = 4096


class Model(nn.Module):
    """gelu(bn(linear(x)))."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(out_features) * 0.1)
            self.bn.running_var.copy_(torch.rand(out_features) + 0.5)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.bn(self.linear(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
