"""GEMM with a tiny reduction dim: (8192 x 32) @ (32 x 8192).

This is an outer-product-like GEMM. It reads only 2 MiB but writes a
256 MiB output, for 4.3 GFLOP: intensity ~16 FLOP/byte, dominated by the
output store. On most accelerators it is memory-bound despite being
"a matmul", so it tests that the bound counts the output write.
"""

import torch
import torch.nn as nn

M = 8192
N = 8192
K = 32


class Model(nn.Module):
    """C = A @ B with K << M, N."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
