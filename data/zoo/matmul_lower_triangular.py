"""Lower-triangular matrix product: C = tril(A @ B) for lower-triangular A and B.

This is the mirror of matmul_upper_triangular. A dense GEMM plus a tril
mask computes ~6x the multiply-adds that the triangular structure
requires. The masking op itself is a memory-bound pass over the N x N
output that an unfused implementation pays for separately.
"""

import torch
import torch.nn as nn

N = 2048


class Model(nn.Module):
    """torch.tril(torch.matmul(A, B))."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


def get_inputs():
    A = torch.tril(torch.randn(N, N))
    B = torch.tril(torch.randn(N, N))
    return [A, B]


def get_init_inputs():
    return []
