"""ResNet-50 bottleneck block (identity shortcut): 256 -> 64 -> 64 -> 256 channels on (8, 256, 56, 56).

conv1x1 (reduce) -> BN -> ReLU -> conv3x3 -> BN -> ReLU -> conv1x1 (expand) -> BN,
plus the input, then ReLU. The 1x1 convs are GEMMs with K = 256 / 64,
and the 3x3 holds most of the FLOPs. The wide 256-channel input and
output (25 MiB each) make the residual read and the final write a large
share of the traffic.
"""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 256
PLANES = 64
EXPANSION = 4
HEIGHT = 56
WIDTH = 56


class Model(nn.Module):
    """Bottleneck(expansion 4), stride 1, identity shortcut."""

    def __init__(self, in_channels, planes, expansion):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * expansion)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, PLANES, EXPANSION]
