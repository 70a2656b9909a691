"""AdaptiveAvgPool2d from 50x50 to 7x7 over a (16, 256, 50, 50) map.

50 is not a multiple of 7, so the adaptive windows have uneven sizes
(7 or 8) and overlap. Each window is [floor(i*50/7), ceil((i+1)*50/7)).
This is the pooling in front of torchvision classifiers. It is memory-bound,
and tests that the analysis derives the windows from the input and
output sizes, not from a fixed kernel.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 256
HEIGHT = 50
WIDTH = 50
OUT_SIZE = 7


class Model(nn.Module):
    """nn.AdaptiveAvgPool2d((OUT_SIZE, OUT_SIZE))."""

    def __init__(self, out_size):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((out_size, out_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [OUT_SIZE]
