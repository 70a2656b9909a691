"""Deep, narrow MLP: 1024 -> 16 layers of width 128 -> 10, ReLU between, batch 1024.

Each layer is a small GEMM (1024 x 128 x 128 = 34 MFLOP) with a
0.5 MiB activation and a 64 KiB weight. No single op comes near peak, and
the total is dominated by per-kernel fixed cost and the serial chain
of 16 dependent layers. A pure roofline sum of the layers is optimistic
here, and this model shows by how much.
"""

import torch
import torch.nn as nn

BATCH = 1024
INPUT_SIZE = 1024
HIDDEN_SIZE = 128
NUM_LAYERS = 16
OUTPUT_SIZE = 10


class Model(nn.Module):
    """Linear(IN, H) -> ReLU -> (NUM_LAYERS - 2) x [Linear(H, H) -> ReLU] -> Linear(H, OUT)."""

    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        layers = [nn.Linear(input_size, hidden_size), nn.ReLU()]
        for _ in range(num_layers - 2):
            layers += [nn.Linear(hidden_size, hidden_size), nn.ReLU()]
        layers.append(nn.Linear(hidden_size, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, NUM_LAYERS, OUTPUT_SIZE]
