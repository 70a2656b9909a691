"""GEMM -> sigmoid -> scale -> residual add: y = Wx + b; out = sigmoid(y) * 2.0 + y.

This is KernelBench's "Gemm_Sigmoid_Scaling_ResidualAdd". The residual
re-uses the GEMM output, so an unfused graph keeps y alive across three
elementwise kernels (four passes over the (1024, 4096) output). A fused
epilogue needs none.
"""

import torch
import torch.nn as nn

BATCH = 1024
IN_FEATURES = 2048
OUT_FEATURES = 4096


class Model(nn.Module):
    """Linear, then sigmoid(y) * scale + y with scale = 2.0."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = 2.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        return torch.sigmoid(y) * self.scale + y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
