"""4D tensor-matrix product via einsum: C[b,i,j,k] = sum_l A[b,i,j,l] * B[l,k].

This contracts only the last axis of a 4D tensor with a matrix. It is a
GEMM of (B*I*J) x L by L x K (65536 rows, 17 GFLOP) written as an einsum.
It checks that einsum lowering exposes the same GEMM a matmul would, with
FLOPs 2*B*I*J*L*K.
"""

import torch
import torch.nn as nn

B = 8
I = 64
J = 128
L = 256
K = 512


class Model(nn.Module):
    """torch.einsum("bijl,lk->bijk", A, B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    return [torch.randn(B, I, J, L), torch.randn(L, K)]


def get_init_inputs():
    return []
