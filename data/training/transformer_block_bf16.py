"""A GPT-style pre-norm transformer block with bfloat16 parameters (B=4, T=128, d=256, 4 heads, MLP 4d).

For ``solar analyze --train``: AdamW keeps an fp32 master copy of every bf16 parameter and its
two fp32 moments, and writes the updated bf16 parameters rounded from the master; the backward
runs in bf16 as autocast-free bf16 training does. Attention is written out (scores, a causal
``masked_fill``, softmax, the weighted sum), as minGPT writes it.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 128
d_model = 256
n_heads = 4
dtype = torch.bfloat16


class Model(nn.Module):
    def __init__(self, d_model, n_heads, seq_len):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model, dtype=dtype)
        self.qkv = nn.Linear(d_model, 3 * d_model, dtype=dtype)
        self.proj = nn.Linear(d_model, d_model, dtype=dtype)
        self.ln2 = nn.LayerNorm(d_model, dtype=dtype)
        self.fc = nn.Linear(d_model, 4 * d_model, dtype=dtype)
        self.out = nn.Linear(4 * d_model, d_model, dtype=dtype)
        self.register_buffer("causal", torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        H, D = self.n_heads, C // self.n_heads
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, H, D).transpose(1, 2)
        k = k.view(B, T, H, D).transpose(1, 2)
        v = v.view(B, T, H, D).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model, dtype=dtype)]


def get_init_inputs():
    return [d_model, n_heads, seq_len]
