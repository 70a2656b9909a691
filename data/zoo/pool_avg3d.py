"""AvgPool3d with a 3x3x3 kernel, stride 2, padding 1 over (8, 32, 32, 32, 32).

This is a volumetric average pool (3D CNNs for video). Each output
averages 27 voxels, and the output is 1/8 the input size. It is
memory-bound, and tests avg_pool3d lowering.
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


class Model(nn.Module):
    """nn.AvgPool3d with stride and padding."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
