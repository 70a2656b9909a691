"""ResNet-18 (hand-written, torchvision layout) on a batch of 4 RGB 112x112 images.

This is the whole network: a 7x7/2 stem, max-pool, four stages of two
basic blocks (64/128/256/512 channels, with projection shortcuts at each
downsampling), global average pool and a 1000-way FC. It has ~3.9 GFLOP
at this size, with 20 convs, 20 eval-mode BNs, 8 residual adds and
ReLUs. The 112x112 input (a quarter of ImageNet's area) keeps eager fast.
See model_resnet18_224 for the production size.
"""

import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 3
HEIGHT = 112
WIDTH = 112
NUM_CLASSES = 1000


class BasicBlock(nn.Module):
    """conv3x3 -> BN -> ReLU -> conv3x3 -> BN, plus (projected) shortcut, then ReLU."""

    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Model(nn.Module):
    """ResNet-18: stem, four stages of two BasicBlocks (64/128/256/512), avgpool, fc."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        layers = []
        in_planes = 64
        for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers.append(nn.Sequential(BasicBlock(in_planes, planes, stride),
                                        BasicBlock(planes, planes, 1)))
            in_planes = planes
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES]
