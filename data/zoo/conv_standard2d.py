"""Conv2d, 3 -> 64 channels, 3x3, padding 1, no bias, over (16, 3, 224, 224).

A first-layer convolution: only 27 multiply-adds per output
(2.8 GFLOP in total) against a 196 MiB output. The
intensity (~13 FLOP/byte) is low for a conv, so this layer is
memory-bound on GPUs even though convolutions are usually "compute".
It is the bias-free variant (bias=False).
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 3
OUT_CHANNELS = 64
HEIGHT = 224
WIDTH = 224
KERNEL_SIZE = 3


class Model(nn.Module):
    """nn.Conv2d(IN, OUT, 3, padding=1, bias=False)."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
                              padding=kernel_size // 2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
