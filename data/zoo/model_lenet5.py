"""LeNet-5 (LeCun 1998) on a batch of 256 single-channel 32x32 digits.

conv(1->6, 5x5) -> tanh -> avgpool(2) -> conv(6->16, 5x5) -> tanh -> avgpool(2)
-> flatten -> fc(400->120) -> tanh -> fc(120->84) -> tanh -> fc(84->10).
Everything is tiny (0.8 MFLOP per image), so the bound is a sum of many
small memory-bound kernels. It is the classic tanh/average-pooling
network, complementing the ReLU/max-pool CNNs elsewhere in the zoo.
"""

import torch
import torch.nn as nn

BATCH = 256
IN_CHANNELS = 1
HEIGHT = 32
WIDTH = 32
NUM_CLASSES = 10


class Model(nn.Module):
    """LeNet-5 with tanh activations and average-pool subsampling."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 6, kernel_size=5)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        self.pool = nn.AvgPool2d(2)
        flat_h = ((HEIGHT - 4) // 2 - 4) // 2
        flat_w = ((WIDTH - 4) // 2 - 4) // 2
        self.fc1 = nn.Linear(16 * flat_h * flat_w, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.tanh(self.conv1(x)))
        x = self.pool(torch.tanh(self.conv2(x)))
        x = x.view(x.size(0), -1)
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES]
