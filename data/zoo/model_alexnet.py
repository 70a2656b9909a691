"""AlexNet (torchvision layout) on a batch of 8 RGB 224x224 images.

Five convs (11x11 stride 4, 5x5, three 3x3) with ReLU and 3x3/2 max-pools,
an adaptive 6x6 average pool, then three FC layers with dropout (eval).
The convs hold most of the ~11 GFLOP (batch 8). The FC layers hold 58.6M of
the 61M parameters (~234 MiB), so at small batch the classifier is
weight-bandwidth-bound. This is the compute/memory split that
motivated later architectures.
"""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 3
HEIGHT = 224
WIDTH = 224
NUM_CLASSES = 1000


class Model(nn.Module):
    """AlexNet: features -> AdaptiveAvgPool2d(6) -> dropout/FC classifier."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 64, kernel_size=11, stride=4, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.5),
            nn.Linear(256 * 6 * 6, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.5),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(self.features(x))
        x = torch.flatten(x, 1)
        return self.classifier(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES]
