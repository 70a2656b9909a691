"""Small UNet (3 down / 3 up levels, 32-64-128-256 channels) for 2-class segmentation of (4, 3, 128, 128).

The encoder is DoubleConv (conv3x3-BN-ReLU x 2) with 2x2 max-pool
downsampling. The decoder upsamples with ConvTranspose2d(2, stride 2),
pads to the skip's size with F.pad (a no-op at this power-of-two size,
but kept as in the original UNet so scaled-down odd sizes work),
concatenates the skip connection and runs another DoubleConv. A 1x1
conv produces the logits. Skip connections keep high-resolution
activations alive across the whole network, so the model's memory
footprint is far larger than any single layer's. The concatenations
are copy traffic that a fused bound can avoid.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
IN_CHANNELS = 3
NUM_CLASSES = 2
BASE_CHANNELS = 32
HEIGHT = 128
WIDTH = 128


class DoubleConv(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class Up(nn.Module):
    """ConvTranspose2d 2x -> pad to the skip's size -> cat -> DoubleConv."""

    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_ch, in_ch // 2, kernel_size=2, stride=2)
        self.conv = DoubleConv(in_ch, out_ch)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        x = self.up(x)
        dy = skip.size(2) - x.size(2)
        dx = skip.size(3) - x.size(3)
        x = F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([skip, x], dim=1))


class Model(nn.Module):
    """UNet with depth 3 and BASE_CHANNELS * (1, 2, 4, 8) widths."""

    def __init__(self, in_channels, num_classes, base):
        super().__init__()
        self.inc = DoubleConv(in_channels, base)
        self.down1 = nn.Sequential(nn.MaxPool2d(2), DoubleConv(base, base * 2))
        self.down2 = nn.Sequential(nn.MaxPool2d(2), DoubleConv(base * 2, base * 4))
        self.down3 = nn.Sequential(nn.MaxPool2d(2), DoubleConv(base * 4, base * 8))
        self.up1 = Up(base * 8, base * 4)
        self.up2 = Up(base * 4, base * 2)
        self.up3 = Up(base * 2, base)
        self.outc = nn.Conv2d(base, num_classes, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x = self.up1(x4, x3)
        x = self.up2(x, x2)
        x = self.up3(x, x1)
        return self.outc(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES, BASE_CHANNELS]
