"""Hand-written multi-head self-attention (B=2, T=128, E=256, H=8).

It spells out the Q/K/V projections, the head split
(view + transpose), the scaled QK^T scores, softmax, the attention-weighted
sum over V, the head merge and the output projection, with no fused SDPA
kernel. The batched matmuls are small (T x D x T with D = 32), so their
arithmetic intensity is low. The (B, H, T, T) score tensor makes the
softmax and scaling memory-bound. The transposes and reshapes test how
an analysis handles layout-only ops (views vs. materializing copies).
"""

import math

import torch
import torch.nn as nn

BATCH_SIZE = 2
SEQ_LEN = 128
EMBED_DIM = 256
NUM_HEADS = 8


class Model(nn.Module):
    """Multi-head self-attention with explicit matmul / softmax."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, E = x.shape
        H, D = self.num_heads, self.head_dim
        q = self.q_proj(x).view(B, T, H, D).transpose(1, 2)
        k = self.k_proj(x).view(B, T, H, D).transpose(1, 2)
        v = self.v_proj(x).view(B, T, H, D).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        attn = torch.softmax(scores, dim=-1)
        out = attn @ v
        out = out.transpose(1, 2).reshape(B, T, E)
        return self.out_proj(out)


def get_inputs():
    x = torch.randn(BATCH_SIZE, SEQ_LEN, EMBED_DIM, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [EMBED_DIM, NUM_HEADS]
