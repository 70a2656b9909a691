"""Conv1d, 64 -> 128 channels, kernel 3, padding 1, over a (16, 64, 4096) signal (with bias).

The 1D convolution of audio and sequence models. Each output does
64 * 3 multiply-adds: 2 * 16 * 128 * 4096 * 192 = 3.2 GFLOP over ~16 MiB
of input and ~32 MiB of output. The intensity (~60 FLOP/byte) puts it
near or above the ridge depending on the device, so the compute/memory
classification is sensitive to the machine.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 128
LENGTH = 4096
KERNEL_SIZE = 3


class Model(nn.Module):
    """nn.Conv1d(IN, OUT, K, padding=K // 2, bias=True)."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
