"""EfficientNet MBConv block (expand 6, 5x5 depthwise, squeeze-excitation 0.25, SiLU) on (16, 40, 28, 28).

1x1 expand (40 -> 240) -> BN -> SiLU -> depthwise 5x5 -> BN -> SiLU -> SE
(global mean -> 1x1 reduce to 10 -> SiLU -> 1x1 expand to 240 -> sigmoid
-> channel-wise scale) -> 1x1 project (240 -> 40) -> BN -> + input.
The SE gate needs a global reduction over the whole depthwise output
before the scale, a fusion barrier in the middle of the block, and
the expanded tensor is 6x the block's input.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 40
HEIGHT = 28
WIDTH = 28
EXPAND_RATIO = 6
KERNEL_SIZE = 5
SE_DIVISOR = 4


class SqueezeExcite(nn.Module):
    """x * sigmoid(W2 silu(W1 mean_hw(x)))."""

    def __init__(self, channels, squeeze_channels):
        super().__init__()
        self.reduce = nn.Conv2d(channels, squeeze_channels, 1)
        self.expand = nn.Conv2d(squeeze_channels, channels, 1)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x.mean(dim=(2, 3), keepdim=True)
        s = torch.sigmoid(self.expand(self.act(self.reduce(s))))
        return x * s


class Model(nn.Module):
    """MBConv6 5x5 with SE and an identity residual (stride 1)."""

    def __init__(self, channels, expand_ratio, kernel_size, se_divisor):
        super().__init__()
        hidden = channels * expand_ratio
        self.expand = nn.Sequential(nn.Conv2d(channels, hidden, 1, bias=False),
                                    nn.BatchNorm2d(hidden), nn.SiLU())
        self.depthwise = nn.Sequential(
            nn.Conv2d(hidden, hidden, kernel_size, padding=kernel_size // 2, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden), nn.SiLU())
        self.se = SqueezeExcite(hidden, max(1, channels // se_divisor))
        self.project = nn.Sequential(nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.depthwise(self.expand(x))
        out = self.project(self.se(out))
        return out + x


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EXPAND_RATIO, KERNEL_SIZE, SE_DIVISOR]
