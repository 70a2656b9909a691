"""Matrix-vector product (GEMV): (M x K) @ (K x 1) with M = 4096, K = 16384.

Each element of the 256 MiB matrix is used exactly once (2 FLOPs per
4-byte load, intensity ~0.5 FLOP/byte), so GEMV is purely bandwidth-bound.
It is the shape of batch-1 LLM decoding. Its bound should be the
matrix-read time, and a compute-based estimate would be wrong by orders
of magnitude.
"""

import torch
import torch.nn as nn

M = 4096
K = 16384


class Model(nn.Module):
    """y = A @ x for a column vector x of shape (K, 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
