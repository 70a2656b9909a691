"""GroupNorm (8 groups of 8 channels) over a (16, 64, 128, 128) feature map.

Statistics are pooled over (channels-in-group, H, W): each of the
16 x 8 groups reduces 131072 values, then a per-channel affine is applied.
It is memory-bound like LayerNorm, but the reduction spans a
non-contiguous channel slab. It is the normalisation of diffusion UNets and
small-batch detectors.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
GROUPS = 8
HEIGHT = 128
WIDTH = 128


class Model(nn.Module):
    """nn.GroupNorm(GROUPS, CHANNELS) with affine."""

    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [GROUPS, CHANNELS]
