"""Linear -> Swish (x * sigmoid(x)) -> scale by 0.5, on (2048, 1024) -> (2048, 2048).

This is a GEMM with a transcendental epilogue and a multiply. The GEMM
is 8.6 GFLOP. Written as three eager ops after the GEMM, the epilogue
reads the GEMM output three times and allocates two temporaries.
"""

import torch
import torch.nn as nn

BATCH = 2048
IN_FEATURES = 1024
OUT_FEATURES = 2048


class Model(nn.Module):
    """(y * sigmoid(y)) * 0.5 with y = linear(x)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = 0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        return y * torch.sigmoid(y) * self.scale


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
