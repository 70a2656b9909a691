"""MaxPool2d with a 3x3 kernel, stride 2, padding 1 and dilation 2 over (16, 64, 128, 128).

The dilated 3x3 window covers a 5x5 footprint, and the stride-2 output is
a quarter of the input. This is a memory-bound windowed reduction: the
minimum traffic reads the 64 MiB input once and writes 16 MiB. An
analysis that charges every window tap a separate read overstates the
bytes ~9x.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
DILATION = 2


class Model(nn.Module):
    """nn.MaxPool2d with stride, padding and dilation."""

    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]
