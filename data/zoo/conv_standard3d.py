"""Conv3d, 16 -> 32 channels, 3x3x3, padding 1, with bias, over (8, 16, 32, 32, 32).

This is a volumetric convolution (video / medical imaging): 432
multiply-adds per output, 7.2 GFLOP over 16 MiB in and 32 MiB out
(~140 FLOP/byte). It tests 3D window indexing and the 5D
weight layout (out, in, kD, kH, kW).
"""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 16
OUT_CHANNELS = 32
DEPTH = 32
HEIGHT = 32
WIDTH = 32
KERNEL_SIZE = 3


class Model(nn.Module):
    """nn.Conv3d(IN, OUT, 3, padding=1)."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
