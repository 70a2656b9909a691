"""Rectangular GEMM: (M x K) @ (K x N) with M = 1024, K = 4096, N = 2048.

Non-square operands change which matrix dominates the traffic (here A is
16 MiB, B 32 MiB, C 8 MiB) while the FLOP count stays 2*M*N*K = 17 GFLOP.
It checks that a roofline analysis sums the three operand footprints
rather than assuming a cube, and that tile quantization along each
dimension is handled independently.
"""

import torch
import torch.nn as nn

M = 1024
K = 4096
N = 2048


class Model(nn.Module):
    """C = A @ B for rectangular A (M x K) and B (K x N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
