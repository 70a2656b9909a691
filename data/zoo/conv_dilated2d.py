"""Dilated (atrous) 3x3 Conv2d, dilation 2, padding 2, 128 -> 128 channels, over (8, 128, 64, 64).

This is the DeepLab ASPP / context-module convolution. Dilation widens
the receptive field to 5x5 at the cost of a 3x3 kernel. FLOPs are those
of a 3x3 conv (9.7 GFLOP), but the input reads are spread over a wider
halo. It tests dilation in window indexing.
"""

import torch
import torch.nn as nn

BATCH = 8
CHANNELS = 128
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3
DILATION = 2


class Model(nn.Module):
    """nn.Conv2d(C, C, 3, padding=DILATION, dilation=DILATION)."""

    def __init__(self, channels, kernel_size, dilation):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size,
                              padding=dilation * (kernel_size // 2), dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE, DILATION]
