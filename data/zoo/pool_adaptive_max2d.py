"""AdaptiveMaxPool2d from 30x30 to 4x4 over a (16, 256, 30, 30) map.

It uses uneven, overlapping windows (30 / 4 = 7.5, so windows of 8 or 9)
with a max reduction, as in spatial-pyramid pooling. It is memory-bound,
and checks adaptive_max_pool2d lowering, which returns indices that are
then discarded.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 256
HEIGHT = 30
WIDTH = 30
OUT_SIZE = 4


class Model(nn.Module):
    """nn.AdaptiveMaxPool2d((OUT_SIZE, OUT_SIZE))."""

    def __init__(self, out_size):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool2d((out_size, out_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [OUT_SIZE]
