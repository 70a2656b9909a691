"""Conv2d with an asymmetric (3, 7) kernel and padding (1, 3), 64 -> 64 channels, over (16, 64, 64, 64).

Inception-style factorised convolutions use 1xN / Nx1 / 3x7 kernels.
Each axis has its own kernel extent and padding. It checks that kernel
and padding are tracked per axis (11.3 GFLOP, with bias).
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 64
WIDTH = 64
KERNEL_H = 3
KERNEL_W = 7


class Model(nn.Module):
    """nn.Conv2d(C, C, (3, 7), padding=(1, 3))."""

    def __init__(self, channels, kernel_h, kernel_w):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, (kernel_h, kernel_w),
                              padding=(kernel_h // 2, kernel_w // 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_H, KERNEL_W]
