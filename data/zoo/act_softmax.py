"""Row softmax over a (256, 16384) activation (dim=1).

Softmax needs a max reduction, an exp-and-sum pass and a normalising
divide. Fused it makes one read and one write. Unfused (as decomposed
ATen) it runs three passes over the data plus two small (256, 1)
intermediates. It shows the fused/unfused traffic gap of a reduction op.
"""

import torch
import torch.nn as nn

BATCH = 256
DIM = 16384


class Model(nn.Module):
    """Softmax(dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
