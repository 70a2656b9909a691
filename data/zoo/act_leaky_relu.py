"""LeakyReLU (negative slope 0.01) over a (256, 16384) activation.

Like ReLU it is a single pass (x if x > 0 else 0.01 * x), so it is
purely memory-bound. It tests that a slope parameter, decomposed into
where/mul ops, adds no traffic beyond one read and one write.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """LeakyReLU(0.01)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x, negative_slope=0.01)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
