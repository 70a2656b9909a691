"""PRODUCTION SIZE: square FP32 GEMM with M = N = K = 4096.

This is the 4096^3 GEMM used to quote a GPU's sustained matmul rate:
137 GFLOP over 3 * 64 MiB = 192 MiB of compulsory traffic (~680 FLOP/byte).
It is here at its real size so the bound can be compared against vendor
numbers without rescaling. Eager forward takes a few seconds on a 2-core
CPU (allowed up to ~20 s for production-size zoo files); validation
should run it at a scaled-down N.
"""

import torch
import torch.nn as nn

M = 4096
N = 4096
K = 4096


class Model(nn.Module):
    """C = A @ B; no parameters."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
