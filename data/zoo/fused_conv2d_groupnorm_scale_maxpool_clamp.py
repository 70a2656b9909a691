"""Conv2d -> GroupNorm -> per-channel scale -> MaxPool2d(2) -> clamp(0, 1).

This is KernelBench's "Conv2d_GroupNorm_Scale_MaxPool_Clamp" on
(32, 16, 128, 128) with 16 -> 32 channels, 3x3, 8 groups. The GroupNorm
needs statistics over the whole conv output before anything downstream
can run, so fusion has a global barrier. The pool then shrinks the data
4x before the clamp.
"""

import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 16
OUT_CHANNELS = 32
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
GROUPS = 8
POOL = 2


class Model(nn.Module):
    """clamp(maxpool(groupnorm(conv(x)) * scale), 0, 1)."""

    def __init__(self, in_channels, out_channels, kernel_size, groups, pool):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(groups, out_channels)
        self.scale = nn.Parameter(torch.rand(out_channels, 1, 1) + 0.5)
        self.maxpool = nn.MaxPool2d(kernel_size=pool)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.group_norm(x)
        x = x * self.scale
        x = self.maxpool(x)
        return torch.clamp(x, 0.0, 1.0)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, GROUPS, POOL]
