"""Square 3x3 Conv2d (32 -> 64, no padding, with bias) on a very wide (16, 32, 64, 512) input.

This is the shape of a spectrogram (64 mel bins x 512 frames) or a
text-line image. Height and width differ by 8x, so a bug that swaps H
and W shows up as a wrong output shape or byte count. With no padding the
output is (62, 510).
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
HEIGHT = 64
WIDTH = 512
KERNEL_SIZE = 3


class Model(nn.Module):
    """nn.Conv2d(IN, OUT, 3) with no padding."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
