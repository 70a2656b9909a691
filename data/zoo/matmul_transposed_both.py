"""GEMM with both operands transposed: C = A^T @ B^T, A as (K, M), B as (N, K).

This is the "TT" BLAS case. It is mathematically (B @ A)^T, so a
library may swap operands and write a transposed result. The FLOPs
(2*M*N*K) and compulsory bytes are unchanged. Together with the TN/NT files
it checks that axis bookkeeping through transposes is right.
"""

import torch
import torch.nn as nn

M = 1024
K = 4096
N = 2048


class Model(nn.Module):
    """C = A.T @ B.T."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B.T)


def get_inputs():
    return [torch.randn(K, M), torch.randn(N, K)]


def get_init_inputs():
    return []
