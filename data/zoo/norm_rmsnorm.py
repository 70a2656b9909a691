"""Channel RMSNorm over a (16, 64, 128, 128) map: x / sqrt(mean(x^2, dim=1) + eps).

This is KernelBench's RMS normalisation across the channel dim at every
pixel. It is a strided reduction (channel stride H*W) with no mean
subtraction. It is memory-bound, and written as explicit pow/mean/sqrt/div
ops, so eager runs four full-size passes where the fused minimum is one
read and one write.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 128
WIDTH = 128


class Model(nn.Module):
    """RMS normalisation over dim 1 with eps = 1e-5, no weight."""

    def __init__(self):
        super().__init__()
        self.eps = 1e-5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
