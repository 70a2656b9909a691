"""LayerNorm -> Linear(512, 2048) -> exact GELU -> Linear(2048, 512).

A transformer feed-forward sublayer over 8 x 128 = 1024 tokens. The two
GEMMs are compute-bound. LayerNorm (reductions over the last dim) and the
erf-based GELU are memory-bound and run over the wide 2048-dim hidden
activation. This mixes both regimes in one graph, so it shows how much
the elementwise and normalization ops add to a GEMM-dominated bound.
"""

import torch
import torch.nn as nn

BATCH_SIZE = 8
SEQ_LEN = 128
HIDDEN_DIM = 512
FFN_DIM = 2048


class Model(nn.Module):
    """Pre-normalized two-layer MLP with exact (erf) GELU."""

    def __init__(self, hidden_dim, ffn_dim):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_dim)
        self.fc1 = nn.Linear(hidden_dim, ffn_dim)
        self.act = nn.GELU(approximate="none")
        self.fc2 = nn.Linear(ffn_dim, hidden_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(self.norm(x))))


def get_inputs():
    x = torch.randn(BATCH_SIZE, SEQ_LEN, HIDDEN_DIM, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [HIDDEN_DIM, FFN_DIM]
