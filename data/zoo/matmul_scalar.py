"""Matrix-scalar multiplication: C = A * s with A of 8192 x 4096 and s a 0-d tensor.

Despite the "matmul" name in KernelBench, this is one multiply per element
with a single read and a single write (intensity 1/8 FLOP/byte), so
it is purely memory-bound. The scalar is a 0-dimensional tensor input,
which checks that the analysis treats it as a broadcast scalar rather
than a full-size operand.
"""

import torch
import torch.nn as nn

M = 8192
N = 4096


class Model(nn.Module):
    """C = A * s (elementwise scaling by a 0-d tensor)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return A * s


def get_inputs():
    return [torch.randn(M, N), torch.randn(())]


def get_init_inputs():
    return []
