"""Multi-layer bidirectional GRU (nn.GRU): 2 layers, hidden 256, on (16, 64, 128) sequences.

Each step computes the reset/update/new gates with 3*hidden-wide GEMMs,
then sigmoid/tanh updates, for each of 2 layers x 2 directions x 64
steps. The recurrence makes eager time latency-bound. A linear head
reads the last time step's 512-wide output. Non-strict torch.export
decomposes aten.gru into an unrolled per-step graph. Compared with the
LSTM it has three gates instead of four, and a (1 - z) * n + z * h
blend.
"""

import torch
import torch.nn as nn

BATCH = 16
SEQ_LEN = 64
INPUT_SIZE = 128
HIDDEN_SIZE = 256
NUM_LAYERS = 2
OUTPUT_SIZE = 10


class Model(nn.Module):
    """nn.GRU(bidirectional, 2 layers, batch_first) -> Linear on the last time step."""

    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.rnn = nn.GRU(input_size, hidden_size, num_layers, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, NUM_LAYERS, OUTPUT_SIZE]
