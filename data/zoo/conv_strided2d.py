"""Strided 7x7 Conv2d, stride 2, padding 3, 3 -> 64 channels, over (8, 3, 224, 224) (the ResNet stem).

Stride 2 makes the output a quarter of the input grid. Each output still
does 147 MACs (1.9 GFLOP), and neighbouring windows overlap by 5 of 7
taps. It checks stride handling in output size and in FLOP counting.
"""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 3
OUT_CHANNELS = 64
HEIGHT = 224
WIDTH = 224
KERNEL_SIZE = 7
STRIDE = 2


class Model(nn.Module):
    """nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=kernel_size // 2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE]
