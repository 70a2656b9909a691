"""Depthwise 3x3 Conv2d (groups = channels = 64) over a (16, 64, 128, 128) map.

Each channel is convolved with its own 3x3 filter: 9 multiply-adds per
output, 0.3 GFLOP over 64 MiB in and 64 MiB out (~1 FLOP/byte).
Depthwise convs are memory-bound even though they are
"convolutions". This is why MobileNets run far below peak FLOPs.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3


class Model(nn.Module):
    """nn.Conv2d(C, C, 3, padding=1, groups=C, bias=False)."""

    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2,
                              groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE]
