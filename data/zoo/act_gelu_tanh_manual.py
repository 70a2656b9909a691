"""minGPT's NewGELU written out op by op over a (256, 16384) activation.

It computes 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) as
seven eager ops with six full-size temporaries. Eager traffic is
~7x the fused minimum, and the Speed-of-Light bound should still be one
read plus one write. It is the classic unfused epilogue found in KernelBench.
"""

import math

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """GELU (tanh formula written out, minGPT NewGELU)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
