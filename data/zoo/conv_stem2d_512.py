"""PRODUCTION SIZE: 3x3 Conv2d (3 -> 64, padding 1, bias) on a (16, 3, 512, 512) batch.

This is a full-resolution segmentation/detection stem: 16 images of
512x512. The output alone is 16 * 64 * 512 * 512 * 4 B = 1 GiB, against
14.5 GFLOP, so this conv is firmly memory-bound on any accelerator (the
output write dominates). Eager forward takes several seconds on a
2-core CPU (allowed up to ~20 s for production-size zoo files); validate
it at a scaled-down HEIGHT/WIDTH.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 3
OUT_CHANNELS = 64
HEIGHT = 512
WIDTH = 512
KERNEL_SIZE = 3


class Model(nn.Module):
    """nn.Conv2d(3, 64, 3, padding=1) with bias."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
