"""Small LeNet-style CNN on CIFAR-sized 32x32 images (batch 8).

Two conv -> ReLU -> MaxPool(2) stages, then a flatten and a Linear
classifier (32*8*8 -> 10). Every op is small, so the bound is spread
across many mildly-sized kernels. It mixes compute-bound convolutions,
memory-bound ReLU/pooling and a tiny GEMM whose cost is mostly reading
its weights. This tests per-op accounting over a whole multi-layer network.
"""

import torch
import torch.nn as nn

BATCH_SIZE = 8
IN_CHANNELS = 3
HEIGHT = 32
WIDTH = 32
CONV1_CHANNELS = 16
CONV2_CHANNELS = 32
NUM_CLASSES = 10


class Model(nn.Module):
    """conv-relu-pool x2 -> flatten -> linear."""

    def __init__(self, in_channels, conv1_channels, conv2_channels, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, conv1_channels, 3, padding=1)
        self.conv2 = nn.Conv2d(conv1_channels, conv2_channels, 3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(conv2_channels * (HEIGHT // 4) * (WIDTH // 4), num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        return self.fc(x)


def get_inputs():
    x = torch.randn(BATCH_SIZE, IN_CHANNELS, HEIGHT, WIDTH, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, CONV1_CHANNELS, CONV2_CHANNELS, NUM_CLASSES]
