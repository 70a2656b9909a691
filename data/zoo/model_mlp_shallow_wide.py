"""Shallow, wide MLP: 2048 -> 4096 -> 4096 -> 1000 with ReLU, batch 512.

Three large GEMMs (29.6 GFLOP in total) over 115 MiB of weights. At
batch 512 the intensity is ~200 FLOP/byte, so the model is
compute-bound. At batch 1 the same model would be weight-read-bound.
Rebinding BATCH moves it across the ridge, which makes it a
good probe of how bounds scale with batch.
"""

import torch
import torch.nn as nn

BATCH = 512
INPUT_SIZE = 2048
HIDDEN_SIZE = 4096
OUTPUT_SIZE = 1000


class Model(nn.Module):
    """Two wide hidden layers with ReLU, then a classifier."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.network = nn.Sequential(
            nn.Linear(input_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, output_size),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, OUTPUT_SIZE]
