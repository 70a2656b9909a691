"""LLaMA-style decoder layer: RMSNorm, RoPE, grouped-query causal attention, SwiGLU MLP.

Sizes: B=2, T=256, hidden 1024, 16 query heads and 4 key/value heads
(head dim 64), MLP 2816. Rotary embeddings use precomputed cos/sin
buffers and rotate_half (chunk + neg + cat). The 4 KV heads are
broadcast to 16 with expand + reshape (repeat_kv). The causal mask is
applied with torch.where against a boolean lower-triangular buffer. The
MLP is down(silu(gate(x)) * up(x)). GQA shrinks the K/V projections 4x,
which moves the attention layer's weight traffic but not its FLOPs.
"""

import math

import torch
import torch.nn as nn

BATCH = 2
SEQ_LEN = 256
HIDDEN = 1024
NUM_HEADS = 16
NUM_KV_HEADS = 4
INTERMEDIATE = 2816


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    """x + attn(norm(x)); x + mlp(norm(x)), with RoPE + GQA + causal where-mask."""

    def __init__(self, hidden, num_heads, num_kv_heads, intermediate, max_seqlen):
        super().__init__()
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim = hidden // num_heads
        self.input_norm = RMSNorm(hidden)
        self.q_proj = nn.Linear(hidden, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, hidden, bias=False)
        self.post_norm = RMSNorm(hidden)
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(max_seqlen).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("causal", torch.tril(torch.ones(max_seqlen, max_seqlen, dtype=torch.bool)))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        H, KV, D = self.num_heads, self.num_kv_heads, self.head_dim
        q = self.q_proj(x).view(B, T, H, D).transpose(1, 2)
        k = self.k_proj(x).view(B, T, KV, D).transpose(1, 2)
        v = self.v_proj(x).view(B, T, KV, D).transpose(1, 2)
        cos, sin = self.cos[:T], self.sin[:T]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = H // KV
        k = k[:, :, None, :, :].expand(B, KV, n_rep, T, D).reshape(B, H, T, D)
        v = v[:, :, None, :, :].expand(B, KV, n_rep, T, D).reshape(B, H, T, D)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(D)
        scores = torch.where(self.causal[:T, :T], scores, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, H * D)
        return self.o_proj(out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.input_norm(x))
        h = self.post_norm(x)
        return x + self.down_proj(nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, NUM_HEADS, NUM_KV_HEADS, INTERMEDIATE, SEQ_LEN]
