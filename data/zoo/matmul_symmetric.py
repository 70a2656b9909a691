"""Product of two symmetric matrices: C = A @ B with A = A^T and B = B^T.

The math is an ordinary dense GEMM (the product of two symmetric
matrices is generally not symmetric), but each input only carries
N(N+1)/2 distinct values. A packed-storage kernel would move about half
the input bytes. The case checks that the analysis does not assume
structure the graph does not express: the graph sees dense N x N operands.
"""

import torch
import torch.nn as nn

N = 2048


class Model(nn.Module):
    """C = A @ B for symmetric A, B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, N)
    A = (A + A.T) / 2
    B = torch.randn(N, N)
    B = (B + B.T) / 2
    return [A, B]


def get_init_inputs():
    return []
