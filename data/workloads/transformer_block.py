"""Pre-norm transformer block (B=2, T=64, E=256, H=4, MLP ratio 4).

    x = x + Attn(LN1(x))
    x = x + MLP(LN2(x)),   MLP = Linear(E, 4E) -> GELU -> Linear(4E, E)

Attention is hand-written (explicit QK^T, softmax, @V) as in
multihead_attention.py, so the graph exposes every op. This is the end-to-end
case. GEMMs, batched attention matmuls, two LayerNorms, softmax, GELU and
two residual adds all run over a small token count (128). Most
non-GEMM ops are memory-bound, and the whole block's bound depends on
how their traffic is summed.
"""

import math

import torch
import torch.nn as nn

BATCH_SIZE = 2
SEQ_LEN = 64
EMBED_DIM = 256
NUM_HEADS = 4
MLP_RATIO = 4


class SelfAttention(nn.Module):
    """Multi-head self-attention with explicit matmul / softmax."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        assert embed_dim % num_heads == 0
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
        out = (attn @ v).transpose(1, 2).reshape(B, T, E)
        return self.out_proj(out)


class Model(nn.Module):
    """Pre-norm transformer block: residual attention + residual GELU MLP."""

    def __init__(self, embed_dim, num_heads, mlp_ratio):
        super().__init__()
        self.ln1 = nn.LayerNorm(embed_dim)
        self.attn = SelfAttention(embed_dim, num_heads)
        self.ln2 = nn.LayerNorm(embed_dim)
        self.mlp = nn.Sequential(
            nn.Linear(embed_dim, mlp_ratio * embed_dim),
            nn.GELU(),
            nn.Linear(mlp_ratio * embed_dim, embed_dim),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


def get_inputs():
    x = torch.randn(BATCH_SIZE, SEQ_LEN, EMBED_DIM, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [EMBED_DIM, NUM_HEADS, MLP_RATIO]
