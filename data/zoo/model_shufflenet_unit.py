"""Two ShuffleNet (v1, g = 3) units on (16, 240, 28, 28): a stride-2 unit then a stride-1 unit.

Each unit runs a grouped 1x1 conv -> BN -> ReLU -> channel shuffle ->
depthwise 3x3 -> BN -> grouped 1x1 conv -> BN. The stride-2 unit
concatenates with a 3x3/2 average-pooled shortcut (240 -> 480 channels);
the stride-1 unit adds its input. The channel shuffle is pure data
movement (view -> transpose -> contiguous -> view): a full-tensor
permuting copy that a bound should charge as memory traffic with zero
FLOPs, or fold into the next conv's read.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 240
OUT_CHANNELS = 480
HEIGHT = 28
WIDTH = 28
GROUPS = 3


def channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = x.transpose(1, 2).contiguous()
    return x.view(b, c, h, w)


class ShuffleUnit(nn.Module):
    """ShuffleNet v1 unit; stride 2 concatenates an avg-pooled shortcut, stride 1 adds it."""

    def __init__(self, in_channels, out_channels, groups, stride):
        super().__init__()
        self.stride = stride
        self.groups = groups
        branch_out = out_channels - in_channels if stride == 2 else out_channels
        mid = out_channels // 4
        self.gconv1 = nn.Conv2d(in_channels, mid, 1, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.dwconv = nn.Conv2d(mid, mid, 3, stride=stride, padding=1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.gconv2 = nn.Conv2d(mid, branch_out, 1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(branch_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.gconv1(x)))
        out = channel_shuffle(out, self.groups)
        out = self.bn2(self.dwconv(out))
        out = self.bn3(self.gconv2(out))
        if self.stride == 2:
            shortcut = F.avg_pool2d(x, kernel_size=3, stride=2, padding=1)
            return F.relu(torch.cat([shortcut, out], dim=1))
        return F.relu(out + x)


class Model(nn.Module):
    """ShuffleUnit(stride 2, 240 -> 480) -> ShuffleUnit(stride 1, 480 -> 480)."""

    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.unit1 = ShuffleUnit(in_channels, out_channels, groups, stride=2)
        self.unit2 = ShuffleUnit(out_channels, out_channels, groups, stride=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.unit2(self.unit1(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS]
