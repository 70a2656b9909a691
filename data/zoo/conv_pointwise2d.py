"""Pointwise (1x1) Conv2d, 256 -> 512 channels with bias, over (16, 256, 28, 28).

A 1x1 conv is a GEMM of (B*H*W) x Cin by Cin x Cout in disguise
(12544 x 256 x 512, 3.3 GFLOP). It checks that the analysis gives it
GEMM-like intensity (~50 FLOP/byte) and does not treat it as a
windowed op.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 256
OUT_CHANNELS = 512
HEIGHT = 28
WIDTH = 28


class Model(nn.Module):
    """nn.Conv2d(IN, OUT, kernel_size=1)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
