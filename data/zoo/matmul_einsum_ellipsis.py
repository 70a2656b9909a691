"""Attention-score einsum with an ellipsis: S = einsum("...qd,...kd->...qk", Q, K).

The `...` stands for the (batch, heads) dims, so this is a batched NT
GEMM over 8*12 = 96 (256 x 64) @ (64 x 256) products (0.8 GFLOP). The
head dim of 64 keeps the intensity low (~20 FLOP/byte), and the
(B, H, T, T) output dominates the traffic. It checks einsum lowering with
implicit batch dims.
"""

import torch
import torch.nn as nn

BATCH = 8
HEADS = 12
SEQ_LEN = 256
HEAD_DIM = 64


class Model(nn.Module):
    """QK^T scores written as an ellipsis einsum."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.einsum("...qd,...kd->...qk", q, k)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ_LEN, HEAD_DIM)
    k = torch.randn(BATCH, HEADS, SEQ_LEN, HEAD_DIM)
    return [q, k]


def get_init_inputs():
    return []
