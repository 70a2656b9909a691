"""SqueezeNet "fire2" module: squeeze 1x1 (96 -> 16), then expand 1x1 (-> 64) and 3x3 (-> 64), concatenated.

Input is (32, 96, 55, 55). The squeeze layer cuts channels 6x so the
3x3 expand is cheap. The two expand branches read the same 16-channel
tensor and write halves of the output, joined by torch.cat. All convs
are small-K GEMMs (K = 96, 16, 144), so the module is
activation-traffic-bound, and fusing the cat into the producers saves a
full copy.
"""

import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 96
HEIGHT = 55
WIDTH = 55
SQUEEZE_CHANNELS = 16
EXPAND1X1_CHANNELS = 64
EXPAND3X3_CHANNELS = 64


class Model(nn.Module):
    """Fire module with ReLU after every conv."""

    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(self.squeeze(x))
        return torch.cat([self.relu(self.expand1x1(x)), self.relu(self.expand3x3(x))], dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, SQUEEZE_CHANNELS, EXPAND1X1_CHANNELS, EXPAND3X3_CHANNELS]
