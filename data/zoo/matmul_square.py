"""Square single-precision GEMM: C = A @ B with M = N = K = 2048.

The textbook compute-bound kernel: 2*N^3 = 17.2 GFLOP over only
3 * N^2 * 4 bytes = 48 MiB of compulsory traffic, an arithmetic intensity
of ~340 FLOP/byte. Any sensible roofline places it firmly on the compute
roof, so its Speed-of-Light bound is set by peak FP32 throughput alone.
"""

import torch
import torch.nn as nn

N = 2048


class Model(nn.Module):
    """C = A @ B for square A and B; no parameters."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [A, B]


def get_init_inputs():
    return []
