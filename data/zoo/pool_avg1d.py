"""AvgPool1d with kernel 8, stride 4, padding 2 over a (32, 64, 4096) signal.

Overlapping average windows (kernel 8 > stride 4). Padded zeros count in
the divisor (count_include_pad=True). It is memory-bound: one read of the
32 MiB input, one write of an output a quarter of that size.
"""

import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 64
LENGTH = 4096
KERNEL_SIZE = 8
STRIDE = 4
PADDING = 2


class Model(nn.Module):
    """nn.AvgPool1d with stride and padding."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
