"""Multi-layer bidirectional LSTM (nn.LSTM): 2 layers, hidden 256, on (16, 64, 128) sequences.

Each step computes four gates with one 4*hidden-wide GEMM, then
sigmoid/tanh updates of the cell and hidden state, for each of 2 layers x
2 directions x 64 steps. The recurrence makes eager time latency-bound.
A linear head reads the last time step's output. On CPU, eager nn.LSTM
dispatches to a fused kernel that FlopCounterMode has no formula for, so
its FLOP count covers only the head. Non-strict torch.export decomposes
aten.lstm into an unrolled per-step graph (addmm, split, sigmoid, tanh,
mul, add).
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
    """nn.LSTM(bidirectional, 2 layers, batch_first) -> Linear on the last time step."""

    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.rnn = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, NUM_LAYERS, OUTPUT_SIZE]
