"""ConvTranspose1d, 64 -> 32 channels, kernel 5, stride 2, padding 2, output_padding 1.

This is 2x upsampling of a (16, 64, 2048) sequence to length 4096, as in
WaveNet/HiFi-GAN-style vocoder decoders. A transposed conv is the
gradient of a strided conv. Only ~1/stride of the kernel taps hit real
inputs for each output, so the useful FLOPs are half of
"dense conv on the upsampled grid". FLOP counters should report the
former.
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 32
LENGTH = 2048
KERNEL_SIZE = 5
STRIDE = 2
PADDING = 2
OUTPUT_PADDING = 1


class Model(nn.Module):
    """nn.ConvTranspose1d with stride, padding and output_padding (with bias)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride,
                                       padding=padding, output_padding=output_padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, OUTPUT_PADDING]
