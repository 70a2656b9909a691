"""A small CNN on 32×32 images (two conv-BN-ReLU-pool stages and a linear head), B=16.

Trained with ``solar analyze --train --optimizer sgd`` (momentum 0.9): BatchNorm runs on batch
statistics and updates its running mean and variance, as ``model.train()`` does. The loss is the
file's own ``loss(outputs)``: the mean log-sum-exp of the logits (a cross-entropy against an
all-zero target's logit), in float32.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 16, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.head = nn.Linear(32 * 8 * 8, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.head(torch.flatten(x, 1))


def loss(outputs):
    return (torch.logsumexp(outputs.float(), dim=-1) - outputs[:, 0].float()).mean()


batch_size = 16
in_channels = 3
num_classes = 10


def get_inputs():
    return [torch.randn(batch_size, in_channels, 32, 32)]


def get_init_inputs():
    return [in_channels, num_classes]
