"""ResNet basic block with a projection shortcut: 64 -> 128 channels, stride 2, on (16, 64, 56, 56).

Main path: conv3x3/2 -> BN -> ReLU -> conv3x3 -> BN. Shortcut: conv1x1/2 -> BN.
Then add and ReLU. This is the first block of ResNet-18's stage 2, the one
that changes resolution. The two branches meet at an add, so neither
branch's output can be consumed in place, and the eval-mode BNs fold into
their convs.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 56
WIDTH = 56
STRIDE = 2


class Model(nn.Module):
    """BasicBlock(expansion 1) with a 1x1 strided downsample shortcut."""

    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, STRIDE]
