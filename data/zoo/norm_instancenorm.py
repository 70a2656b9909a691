"""InstanceNorm2d (no affine) over a (16, 64, 128, 128) feature map.

It normalises every (sample, channel) plane over its H x W = 16384 values,
which is GroupNorm with one channel per group. It is memory-bound, with
1024 independent reductions. This is the normalisation of style-transfer
and GAN generators. Export routes it through batch-norm style kernels on
a reshaped tensor, so it tests decomposition handling.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 128
WIDTH = 128


class Model(nn.Module):
    """nn.InstanceNorm2d(CHANNELS) with no affine and no running stats."""

    def __init__(self, channels):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inorm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
