"""MobileNetV2 (width 1.0) on a batch of 4 RGB 128x128 images.

A stem, 17 inverted-residual blocks (1x1 expand -> BN -> ReLU6 ->
depthwise 3x3 -> BN -> ReLU6 -> 1x1 linear projection -> BN, with a
residual add when shapes match), a 1x1 conv to 1280, global average pool,
dropout (eval) and a 1000-way FC. The expanded (6x) intermediates
are the big tensors, and fusing expand->depthwise->project keeps them on
chip. That is the main gap between an op-by-op and a fused bound here.
ReLU6 lowers to hardtanh/clamp.
"""

import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 3
HEIGHT = 128
WIDTH = 128
NUM_CLASSES = 1000


def conv_bn_relu6(inp, oup, kernel, stride, groups=1):
    return nn.Sequential(
        nn.Conv2d(inp, oup, kernel, stride, kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(oup),
        nn.ReLU6(inplace=True),
    )


class InvertedResidual(nn.Module):
    """Expand (1x1) -> depthwise (3x3) -> linear project (1x1), residual if stride 1 and same width."""

    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden = inp * expand_ratio
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(conv_bn_relu6(inp, hidden, 1, 1))
        layers += [
            conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
            nn.Conv2d(hidden, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class Model(nn.Module):
    """MobileNetV2 with the standard (t, c, n, s) settings."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        settings = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                    [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]
        features = [conv_bn_relu6(in_channels, 32, 3, 2)]
        inp = 32
        for t, c, n, s in settings:
            for i in range(n):
                features.append(InvertedResidual(inp, c, s if i == 0 else 1, t))
                inp = c
        features.append(conv_bn_relu6(inp, 1280, 1, 1))
        self.features = nn.Sequential(*features)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.flatten(self.pool(self.features(x)), 1)
        return self.classifier(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES]
