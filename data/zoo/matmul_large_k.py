"""GEMM with a very large reduction dim: (256 x 131072) @ (131072 x 256).

The output is tiny (256 KiB) but each element is a 131072-long dot
product: 17 GFLOP over 256 MiB of input. The intensity is still high
(~64 FLOP/byte), yet with only 256x256 outputs there are few output
tiles. Real kernels must split K (split-K / stream-K) to fill the machine.
The case probes whether a bound assumes enough output parallelism.
"""

import torch
import torch.nn as nn

M = 256
N = 256
K = 131072


class Model(nn.Module):
    """C = A @ B with K >> M, N."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
