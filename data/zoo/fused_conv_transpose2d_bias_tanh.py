"""ConvTranspose2d -> subtract a learned per-channel bias -> tanh.

This is KernelBench's "ConvTranspose2d_BiasAdd_Tanh" on (16, 64, 32, 32),
64 -> 32 channels, 4x4, stride 2, padding 1: a GAN generator layer. The
broadcast (C, 1, 1) bias and the tanh are a pointwise epilogue over the
(16, 32, 64, 64) output.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 32
HEIGHT = 32
WIDTH = 32
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    """tanh(conv_transpose(x) - bias)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                                 stride=stride, padding=padding)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.conv_transpose(x) - self.bias)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
