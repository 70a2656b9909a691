"""3D tensor times matrix: (N, M, K) @ (K, L) -> (N, M, L).

torch.matmul folds the leading dim into the rows, so this is one GEMM of
(N*M) x K by K x L (16*1024 = 16384 rows, 2*16384*1024*768 = 25.8 GFLOP).
It is the layout of applying a Linear layer to a (batch, seq, features)
activation. It tests that the analysis sees one large GEMM rather than N
small ones.
"""

import torch
import torch.nn as nn

N = 16
M = 1024
K = 1024
L = 768


class Model(nn.Module):
    """torch.matmul of a 3D tensor with a shared 2D matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(N, M, K), torch.randn(K, L)]


def get_init_inputs():
    return []
