"""Conv2d (3x3, no bias) -> BatchNorm2d (eval) -> ReLU on (16, 64, 56, 56) -> 64 channels.

This is the ResNet "conv-bn-relu" unit. At inference the BN folds into
the conv weights and the ReLU into its epilogue, so the fused bound is
one conv (3.7 GFLOP) with compulsory activation traffic. Unfused,
two extra full passes over the 12 MiB output are charged.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 64
HEIGHT = 56
WIDTH = 56


class Model(nn.Module):
    """relu(bn(conv3x3(x)))."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(out_channels) * 0.1)
            self.bn.running_var.copy_(torch.rand(out_channels) + 0.5)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
