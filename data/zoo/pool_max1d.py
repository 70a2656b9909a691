"""MaxPool1d with kernel 4, stride 2, padding 2 and dilation 3 over a (32, 64, 4096) signal.

Each output is a max over 4 taps spread 3 apart (a 10-sample receptive
field). Stride 2 halves the length, so reads are 2x the writes and
overlapping windows share inputs. It is memory-bound, and checks that
padding (with -inf) and dilation are reflected in the output length,
floor((L + 2p - d(k-1) - 1) / s) + 1 = 2044.
"""

import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 64
LENGTH = 4096
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 2
DILATION = 3


class Model(nn.Module):
    """nn.MaxPool1d with stride, padding and dilation."""

    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]
