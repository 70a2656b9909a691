"""Conv3d -> Softmax over channels -> MaxPool3d(2) -> MaxPool3d(2).

This is KernelBench's "Conv3d_Softmax_MaxPool_MaxPool" on
(8, 3, 16, 32, 32) with 3 -> 16 channels, 3x3x3. The channel softmax
reduces across the 16 channels at every voxel (stride D*H*W). The two
pools then shrink the tensor 64x, so downstream traffic is negligible
next to the conv output.
"""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 3
OUT_CHANNELS = 16
DEPTH = 16
HEIGHT = 32
WIDTH = 32
KERNEL_SIZE = 3
POOL = 2


class Model(nn.Module):
    """pool(pool(softmax(conv3d(x), dim=1)))."""

    def __init__(self, in_channels, out_channels, kernel_size, pool):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool1 = nn.MaxPool3d(pool)
        self.pool2 = nn.MaxPool3d(pool)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.softmax(x, dim=1)
        return self.pool2(self.pool1(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, POOL]
