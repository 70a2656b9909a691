"""Broadcast batched matmul: A (B, 1, M, K) @ W (H, K, N) -> (B, H, M, N).

torch.matmul broadcasts the leading dims: every batch item of A is
multiplied by every one of the H matrices in W. A is read once per head
(or cached) and W is shared across the batch, so compulsory traffic is far
below the naive "expand then bmm" traffic. It tests whether the analysis
counts broadcast operands once (compulsory bytes) or per use.
"""

import torch
import torch.nn as nn

BATCH = 16
HEADS = 8
M = 256
K = 128
N = 256


class Model(nn.Module):
    """torch.matmul with broadcasting over the two leading batch dims."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, W)


def get_inputs():
    A = torch.randn(BATCH, 1, M, K)
    W = torch.randn(HEADS, K, N)
    return [A, W]


def get_init_inputs():
    return []
