"""Swish written by hand as x * torch.sigmoid(x) over a (256, 16384) activation.

This is the same math as act_silu, but as two separate ops. Eager
execution materialises sigmoid(x) and reads x twice, so unfused traffic
is ~2x the fused minimum. It tests that a Speed-of-Light bound reports
the fused (compulsory) traffic, not the eager op-by-op traffic.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """Swish (x * sigmoid(x), written out)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
