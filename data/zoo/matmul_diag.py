"""Diagonal matrix times matrix, written naively: torch.diag(a) @ B.

torch.diag materialises an N x N matrix that is zero off the diagonal, then
a dense GEMM does 2*N*N*M FLOPs. The useful work is only N*M multiplies
(row scaling). This shows the gap between the FLOPs an implementation
executes and the FLOPs the math needs. A Speed-of-Light analysis should
flag that the algorithmic minimum is a memory-bound row scale.
"""

import torch
import torch.nn as nn

N = 2048
M = 2048


class Model(nn.Module):
    """C = diag(a) @ B with a of shape (N,) and B of shape (N, M)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(a) @ B


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []
