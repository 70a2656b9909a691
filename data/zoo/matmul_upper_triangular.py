"""Upper-triangular matrix product: C = triu(A @ B) for upper-triangular A and B.

The product of two upper-triangular matrices is upper triangular and
needs only ~N^3/3 multiply-adds. The dense GEMM does 2*N^3, and torch.triu
then zeroes the lower half. The gap between executed and necessary
FLOPs (about 6x) is what a structure-aware Speed-of-Light bound should
expose.
"""

import torch
import torch.nn as nn

N = 2048


class Model(nn.Module):
    """torch.triu(torch.matmul(A, B))."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.triu(torch.matmul(A, B))


def get_inputs():
    A = torch.triu(torch.randn(N, N))
    B = torch.triu(torch.randn(N, N))
    return [A, B]


def get_init_inputs():
    return []
