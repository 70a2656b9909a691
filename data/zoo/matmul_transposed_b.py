"""GEMM with a transposed right operand: C = A @ B^T, B stored as (N, K).

This is the layout of nn.Linear (weights stored out x in) and of Q @ K^T
in attention (the "NT" case). FLOPs are 2*M*N*K, and the transpose is a
free view that should add no traffic.
"""

import torch
import torch.nn as nn

M = 1024
K = 4096
N = 2048


class Model(nn.Module):
    """C = A @ B.T."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []
