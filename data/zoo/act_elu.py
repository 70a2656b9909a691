"""ELU (alpha = 1) over a (256, 16384) activation: x if x > 0 else exp(x) - 1.

ELU is elementwise with a conditional exp, and memory-bound. It shares
its ATen decomposition with SELU (aten.elu with different scales).
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """ELU(alpha=1.0)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.elu(x, alpha=1.0)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
