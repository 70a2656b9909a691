"""VGG-11 (configuration "A", no BN) on a batch of 8 RGB 64x64 images.

Eight 3x3 convs (64-128-256-256-512-512-512-512) with five 2x2 max-pools,
then an adaptive 2x2 average pool and a 2048 -> 4096 -> 4096 -> 1000
classifier with dropout (eval). The convs are uniformly compute-bound
3x3 GEMM-like work (~10 GFLOP). The 64x64 input keeps the run cheap while
keeping the real layer widths, and the 2x2 adaptive pool replaces the
224-input 7x7 one.
"""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 3
HEIGHT = 64
WIDTH = 64
POOL_OUT = 2
NUM_CLASSES = 1000

class Model(nn.Module):
    """VGG-11: conv3x3/ReLU stacks with max-pools, then a 3-layer classifier."""

    def __init__(self, in_channels, pool_out, num_classes):
        super().__init__()
        cfg_a = [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]
        layers = []
        channels = in_channels
        for v in cfg_a:
            if v == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
                channels = v
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((pool_out, pool_out))
        self.classifier = nn.Sequential(
            nn.Linear(512 * pool_out * pool_out, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.5),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.5),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, POOL_OUT, NUM_CLASSES]
