"""LLaMA-style RMSNorm over the hidden dim of an (8, 1024, 2048) token tensor.

y = weight * x * rsqrt(mean(x^2, dim=-1) + eps), applied before every
attention and MLP in LLaMA-family models. A contiguous row reduction plus
an elementwise scale: memory-bound, 64 MiB in and out. Compared with
norm_layernorm it drops the mean subtraction and the bias.
"""

import torch
import torch.nn as nn

BATCH = 8
SEQ_LEN = 1024
HIDDEN = 2048


class Model(nn.Module):
    """RMSNorm with a learned per-feature weight, eps = 1e-6."""

    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
