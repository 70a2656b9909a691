"""GEMM with a transposed left operand: C = A^T @ B, A stored as (K, M).

A.T is a stride-swapped view, so a GEMM kernel reads A in column-major
order (the "TN" BLAS case). FLOPs and compulsory bytes equal those of the
plain GEMM. The check is that the view is not costed as an extra
transpose copy, and that M and K are read from the right axes.
"""

import torch
import torch.nn as nn

M = 1024
K = 4096
N = 2048


class Model(nn.Module):
    """C = A.T @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []
