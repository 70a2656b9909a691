"""DenseNet-121 dense block (6 layers, growth 32, bottleneck 4x) plus its transition layer.

Input is (4, 64, 56, 56). Each layer runs BN -> ReLU -> conv1x1 (-> 128) ->
BN -> ReLU -> conv3x3 (-> 32) on the concatenation of all earlier
feature maps, and its output is appended with torch.cat. The transition
(BN -> ReLU -> conv1x1 -> avgpool 2x2) halves channels and resolution.
Repeated concatenation means every layer re-reads a growing input
(64 -> 224 channels), so eager traffic grows quadratically with depth
while FLOPs grow linearly.
"""

import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 64
HEIGHT = 56
WIDTH = 56
NUM_LAYERS = 6
GROWTH_RATE = 32
BN_SIZE = 4


class DenseLayer(nn.Module):
    """BN-ReLU-Conv1x1-BN-ReLU-Conv3x3 producing GROWTH_RATE new channels."""

    def __init__(self, in_channels, growth_rate, bn_size):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(in_channels)
        self.conv1 = nn.Conv2d(in_channels, bn_size * growth_rate, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, 3, padding=1, bias=False)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, features):
        x = torch.cat(features, dim=1)
        x = self.conv1(self.relu(self.norm1(x)))
        return self.conv2(self.relu(self.norm2(x)))


class Model(nn.Module):
    """Dense block followed by a transition layer (compression 0.5)."""

    def __init__(self, in_channels, num_layers, growth_rate, bn_size):
        super().__init__()
        self.layers = nn.ModuleList(
            DenseLayer(in_channels + i * growth_rate, growth_rate, bn_size) for i in range(num_layers)
        )
        out_channels = in_channels + num_layers * growth_rate
        self.transition = nn.Sequential(
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels // 2, 1, bias=False),
            nn.AvgPool2d(kernel_size=2, stride=2),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = [x]
        for layer in self.layers:
            features.append(layer(features))
        return self.transition(torch.cat(features, dim=1))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_LAYERS, GROWTH_RATE, BN_SIZE]
