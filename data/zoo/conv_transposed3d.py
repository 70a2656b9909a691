"""ConvTranspose3d, 32 -> 16 channels, 3x3x3, stride 2, padding 1, output_padding 1.

This is volumetric 2x upsampling of (4, 32, 16, 16, 16) to 32^3, the
decoder of a 3D UNet (medical segmentation). It tests the 3D transposed
path and output-size arithmetic:
(D - 1) * s - 2p + k + output_padding = 32.
"""

import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 32
OUT_CHANNELS = 16
DEPTH = 16
HEIGHT = 16
WIDTH = 16
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
OUTPUT_PADDING = 1


class Model(nn.Module):
    """nn.ConvTranspose3d with stride, padding and output_padding (with bias)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                       padding=padding, output_padding=output_padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, OUTPUT_PADDING]
