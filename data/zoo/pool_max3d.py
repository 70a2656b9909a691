"""MaxPool3d with a 3x3x3 kernel, stride 2, padding 1, dilation 3 over (8, 32, 32, 32, 32).

This is a volumetric windowed max (video / medical imaging). Each output
reduces 27 taps from a 7x7x7 dilated footprint, and the stride-2 output
is 1/8 of the input. It is memory-bound, and tests 3D window arithmetic
with dilation.
"""

import torch
import torch.nn as nn

BATCH = 8
CHANNELS = 32
DEPTH = 32
HEIGHT = 32
WIDTH = 32
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
DILATION = 3


class Model(nn.Module):
    """nn.MaxPool3d with stride, padding and dilation."""

    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]
