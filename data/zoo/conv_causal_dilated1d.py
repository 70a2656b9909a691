"""Causal dilated Conv1d (WaveNet): left-pad by dilation*(k-1) with F.pad, then conv, dilation 8.

The input is (16, 64, 8192) with a 64 -> 64 kernel of size 2 (with bias).
The explicit left pad makes the conv causal, and it materialises a padded
copy in eager mode, which a fused kernel would avoid. Two taps per
output keep the intensity low (~32 FLOP/byte), so it is memory-bound on
big GPUs.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
CHANNELS = 64
LENGTH = 8192
KERNEL_SIZE = 2
DILATION = 8


class Model(nn.Module):
    """F.pad(x, (dilation * (k - 1), 0)) -> nn.Conv1d(C, C, k, dilation=DILATION)."""

    def __init__(self, channels, kernel_size, dilation):
        super().__init__()
        self.left_pad = dilation * (kernel_size - 1)
        self.conv = nn.Conv1d(channels, channels, kernel_size, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(F.pad(x, (self.left_pad, 0)))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE, DILATION]
