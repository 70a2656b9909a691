"""Linear (GEMM + bias) followed by ReLU: (1024 x 2048) @ (2048 x 4096) + b, then max(0, .).

The most common fused epilogue. The GEMM (17 GFLOP) is compute-bound.
Unfused, the bias add (inside addmm) and the ReLU re-read and re-write
the 16 MiB output. Fused, the epilogue is free. The gap between the
two is the value of epilogue fusion.
"""

import torch
import torch.nn as nn

BATCH = 1024
IN_FEATURES = 2048
OUT_FEATURES = 4096


class Model(nn.Module):
    """relu(x @ W^T + b)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
