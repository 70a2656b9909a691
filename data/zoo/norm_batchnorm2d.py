"""BatchNorm2d in eval mode over a (16, 64, 128, 128) feature map.

In inference BatchNorm is a per-channel affine map,
(x - running_mean) / sqrt(running_var + eps) * weight + bias. It is one
read and one write of 64 MiB with a few FLOPs per element, so it is
memory-bound (and in a real deployment folded into the preceding conv).
The running statistics and affine params are randomised at construction
so the op is not an identity.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 128
WIDTH = 128


class Model(nn.Module):
    """nn.BatchNorm2d evaluated with running statistics."""

    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(channels) * 0.1)
            self.bn.running_var.copy_(torch.rand(channels) + 0.5)
            self.bn.weight.copy_(torch.rand(channels) + 0.5)
            self.bn.bias.copy_(torch.randn(channels) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
