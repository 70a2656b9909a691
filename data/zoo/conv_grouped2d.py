"""Grouped 3x3 Conv2d, 256 -> 256 channels in 32 groups (ResNeXt), over (16, 256, 28, 28).

Each group is an independent 8 -> 8 channel conv, so FLOPs drop 32x versus
a dense conv (0.46 GFLOP) while the activation traffic is unchanged.
The intensity falls from compute-bound to near the ridge. It checks that
FLOPs and weight bytes divide by the group count.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 256
GROUPS = 32
HEIGHT = 28
WIDTH = 28
KERNEL_SIZE = 3


class Model(nn.Module):
    """nn.Conv2d(C, C, 3, padding=1, groups=GROUPS, bias=False)."""

    def __init__(self, channels, groups, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2,
                              groups=groups, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, GROUPS, KERNEL_SIZE]
