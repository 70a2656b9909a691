"""Conv2d -> InstanceNorm2d (affine) -> HardSwish on (16, 32, 96, 96) -> 64 channels, 3x3.

InstanceNorm needs per-(sample, channel) statistics over the whole
output plane before normalising. It is a reduction barrier between the
conv and the elementwise epilogue, as with GroupNorm, but with 1024
independent small reductions. This pattern appears in style-transfer
networks.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
HEIGHT = 96
WIDTH = 96


class Model(nn.Module):
    """hardswish(instancenorm(conv(x)))."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.InstanceNorm2d(out_channels, affine=True)
        self.act = nn.Hardswish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
