"""Batched GEMM (torch.bmm): 128 independent (128 x 256) @ (256 x 512) products.

Each matrix product is small (2*128*256*512 = 33.5 MFLOP) and its
intensity is modest (~36 FLOP/byte), but the batch supplies enough
parallel work to fill a device. This is the shape of per-head attention
matmuls. It tests that the batch dimension multiplies both FLOPs and bytes
and does not change the intensity.
"""

import torch
import torch.nn as nn

BATCH = 128
M = 128
K = 256
N = 512


class Model(nn.Module):
    """C[b] = A[b] @ B[b] via torch.bmm."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
