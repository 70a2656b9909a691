"""Conv2d -> AvgPool2d(2) -> Sigmoid -> sum over (C, H, W): one scalar per sample.

This is KernelBench's "Conv2d_AvgPool_Sigmoid_Sum" on (32, 8, 128, 128),
8 -> 32 channels, 3x3. The chain ends in a full per-sample reduction,
so the final output is 32 floats. The Speed-of-Light traffic is
essentially the input read plus weights. The ~62 MiB conv output need
never reach memory.
"""

import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 8
OUT_CHANNELS = 32
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
POOL = 2


class Model(nn.Module):
    """sum(sigmoid(avgpool(conv(x))), dim=[1, 2, 3])."""

    def __init__(self, in_channels, out_channels, kernel_size, pool):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.avg_pool = nn.AvgPool2d(pool)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avg_pool(self.conv(x))
        return torch.sum(torch.sigmoid(x), dim=[1, 2, 3])


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, POOL]
