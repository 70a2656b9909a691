"""GEMM with awkward sizes: (1537 x 3079) @ (3079 x 2049).

None of the dims is a multiple of a typical tile (64/128/256), so a real
kernel wastes part of its last tile row and column (tile quantization) and
may hit unaligned vector loads. The ideal FLOP count is still 2*M*N*K
(19.4 GFLOP). It measures how far a Speed-of-Light bound, which ignores
tiling, sits from what hardware can reach.
"""

import torch
import torch.nn as nn

M = 1537
K = 3079
N = 2049


class Model(nn.Module):
    """C = A @ B with non-power-of-two sizes."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
