"""Depthwise-separable conv: depthwise 3x3 (64 ch) then pointwise 1x1 (64 -> 128), over (16, 64, 112, 112).

This is the MobileNet building block. The depthwise half is
memory-bound (9 MACs per output). The pointwise half is a GEMM with
K = 64 (moderate intensity). Run unfused, the 49 MiB intermediate
goes to memory and back. A fused Speed-of-Light bound keeps it on chip,
so the pair shows what fusing a memory-bound producer into a GEMM is
worth.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 112
WIDTH = 112
KERNEL_SIZE = 3


class Model(nn.Module):
    """Depthwise Conv2d (no bias) -> pointwise Conv2d (with bias)."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size,
                                   padding=kernel_size // 2, groups=in_channels, bias=False)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
