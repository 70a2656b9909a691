"""Conv2d (3x3, same channels) -> + residual input -> ReLU on (16, 128, 28, 28).

This is the tail of a ResNet block. The residual add reads a second
full-size tensor (the block input), so the fused epilogue is not free:
it adds one compulsory 6 MiB read. The analysis must count that read
even in the fully fused bound.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 128
HEIGHT = 28
WIDTH = 28


class Model(nn.Module):
    """relu(conv(x) + x)."""

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x) + x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
