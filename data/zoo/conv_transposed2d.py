"""ConvTranspose2d, 128 -> 64 channels, 4x4, stride 2, padding 1 over (16, 128, 64, 64).

The DCGAN / UNet-decoder 2x upsampling layer. Each input pixel scatters
a 4x4 x 64 patch and every output gathers from 2x2 inputs. The cost is
2 * B * Cin * Cout * Hin * Win * 16 = 17 GFLOP. It tests transposed
convolution lowering (aten.convolution with transposed=True).
"""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 128
OUT_CHANNELS = 64
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    """nn.ConvTranspose2d(IN, OUT, 4, stride=2, padding=1, bias=False)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                       padding=padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
