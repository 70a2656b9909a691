"""Adaptive average pool to length 1 over a (64, 512, 1024) sequence (global average).

AdaptiveAvgPool1d(1) is a mean over the whole length: a row reduction
that writes only 64 x 512 values. The traffic is almost all reads
(64*512*1024*4 B = 128 MiB in, 128 KiB out), so the bound is
read bandwidth. This is the head of 1D CNN classifiers (audio, ECG).
"""

import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 512
LENGTH = 1024


class Model(nn.Module):
    """nn.AdaptiveAvgPool1d(1) then flatten."""

    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool1d(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(self.pool(x), 1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return []
