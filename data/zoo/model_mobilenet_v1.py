"""MobileNetV1 (width 1.0) on a batch of 4 RGB 160x160 images.

A 3x3/2 stem, then 13 depthwise-separable blocks (depthwise 3x3 -> BN ->
ReLU -> pointwise 1x1 -> BN -> ReLU) widening 32 -> 1024 channels, global
average pool and a 1000-way FC. Over 95% of the FLOPs are in the 1x1
convs, but the 13 depthwise convs are memory-bound and take a
disproportionate share of the time. So the network runs well below
peak, and a per-op roofline shows why.
"""

import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 3
HEIGHT = 160
WIDTH = 160
NUM_CLASSES = 1000


def conv_bn(inp, oup, stride):
    return nn.Sequential(
        nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
        nn.BatchNorm2d(oup),
        nn.ReLU(inplace=True),
    )


def conv_dw(inp, oup, stride):
    return nn.Sequential(
        nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
        nn.BatchNorm2d(inp),
        nn.ReLU(inplace=True),
        nn.Conv2d(inp, oup, 1, 1, 0, bias=False),
        nn.BatchNorm2d(oup),
        nn.ReLU(inplace=True),
    )


class Model(nn.Module):
    """MobileNetV1: stem + 13 depthwise-separable blocks + avgpool + FC."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        blocks = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1),
                  (256, 512, 2)] + [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
        self.features = nn.Sequential(conv_bn(in_channels, 32, 2),
                                      *[conv_dw(i, o, s) for i, o, s in blocks])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(1024, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.features(x))
        return self.fc(x.view(x.size(0), -1))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES]
