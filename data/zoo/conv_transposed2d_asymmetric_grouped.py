"""ConvTranspose2d with everything asymmetric: kernel (3, 5), stride (2, 3), padding (1, 2),
dilation (2, 1), 4 groups, over a (8, 64, 48, 32) map.

This is the hardest transposed-conv configuration in KernelBench-style
suites. Each spatial axis has its own stride, padding and dilation, and
grouping splits channels into 4 independent 16 -> 8 convolutions. The
output size is (H-1)*s - 2p + d*(k-1) + 1 per axis. It is a stress test
for window and group index arithmetic rather than for throughput.
"""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 32
HEIGHT = 48
WIDTH = 32
KERNEL_H = 3
KERNEL_W = 5
STRIDE_H = 2
STRIDE_W = 3
PADDING_H = 1
PADDING_W = 2
DILATION_H = 2
DILATION_W = 1
GROUPS = 4


class Model(nn.Module):
    """Grouped, dilated, asymmetric nn.ConvTranspose2d (with bias)."""

    def __init__(self, in_channels, out_channels, kernel, stride, padding, dilation, groups):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel, stride=stride,
                                       padding=padding, dilation=dilation, groups=groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, (KERNEL_H, KERNEL_W), (STRIDE_H, STRIDE_W),
            (PADDING_H, PADDING_W), (DILATION_H, DILATION_W), GROUPS]
