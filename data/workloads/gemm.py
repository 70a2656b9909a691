"""Square single-precision GEMM: C = A @ B with M = N = K = 1024.

The canonical compute-bound kernel. It does 2*M*N*K FLOPs over only
(M*K + K*N + M*N) * 4 bytes of compulsory traffic, so its arithmetic
intensity (~170 FLOP/byte) sits far right of the ridge point on any
current CPU or GPU. This is the reference point for a roofline analysis.
"""

import torch
import torch.nn as nn

M = 1024
N = 1024
K = 1024


class Model(nn.Module):
    """Plain matrix multiply, with no parameters."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K, dtype=torch.float32)
    B = torch.randn(K, N, dtype=torch.float32)
    return [A, B]


def get_init_inputs():
    return []
