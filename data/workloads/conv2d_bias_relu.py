"""3x3 Conv2d (with bias) followed by ReLU, on a small batch of 64x64 maps.

A convolution is compute-heavy (each output reads a 16x3x3 window), but
the bias add and ReLU are pure elementwise ops. Run unfused, the ReLU
makes an extra memory-bound round trip over the activation. This tests
whether an analysis charges the epilogue separately or folds it into the
convolution.
"""

import torch
import torch.nn as nn

BATCH_SIZE = 4
IN_CHANNELS = 16
OUT_CHANNELS = 32
KERNEL_SIZE = 3
PADDING = 1
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    """Conv2d(bias=True) -> ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, padding=padding, bias=True
        )
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.conv(x))


def get_inputs():
    x = torch.randn(BATCH_SIZE, IN_CHANNELS, HEIGHT, WIDTH, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING]
