"""AvgPool2d with a 3x3 kernel, stride 2, padding 1 over a (16, 64, 128, 128) map.

This is the downsampling average pool of Inception/DenseNet transitions.
It is a windowed mean, memory-bound. With count_include_pad=True the
border windows divide by 9 including the padded zeros.
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


class Model(nn.Module):
    """nn.AvgPool2d with stride and padding."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
