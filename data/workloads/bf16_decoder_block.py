"""A bf16 decoder block as inference runs it (B=2, T=64, dim 256, 8 query heads, 2 KV heads).

    h = x + Attn(RMSNorm1(x)),  Attn: grouped-query attention with rotary embedding, causal
    y = h + SwiGLU(RMSNorm2(h)), SwiGLU(z) = W2(silu(W1 z) * W3 z)

Weights, activations and the output are bfloat16. RMSNorm computes its statistic in float32
(``x.float()`` ... ``.to(dtype)``), as LLaMA-style code does, so the graph carries casts both
ways; the rotary tables are float32 buffers cast to bf16 in forward. Each KV head serves
n_heads / n_kv_heads = 4 query heads (``repeat_interleave``).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 64
dim = 256
n_heads = 8
n_kv_heads = 2
ffn_dim = 512
rope_theta = 10000.0
dtype = torch.bfloat16


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim, dtype=dtype))

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return xf.to(x.dtype) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, ffn_dim, seq_len):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = dim // n_heads
        self.attn_norm = RMSNorm(dim)
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False, dtype=dtype)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False, dtype=dtype)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False, dtype=dtype)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False, dtype=dtype)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, ffn_dim, bias=False, dtype=dtype)
        self.w3 = nn.Linear(dim, ffn_dim, bias=False, dtype=dtype)
        self.w2 = nn.Linear(ffn_dim, dim, bias=False, dtype=dtype)
        inv_freq = 1.0 / (rope_theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        mask = torch.full((seq_len, seq_len), float("-inf")).triu(1)
        self.register_buffer("mask", mask.to(dtype))

    def forward(self, x):
        B, T, _ = x.shape
        H, KV, D = self.n_heads, self.n_kv_heads, self.head_dim
        z = self.attn_norm(x)
        q = self.wq(z).view(B, T, H, D).transpose(1, 2)
        k = self.wk(z).view(B, T, KV, D).transpose(1, 2)
        v = self.wv(z).view(B, T, KV, D).transpose(1, 2)
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // KV, dim=1)
        v = v.repeat_interleave(H // KV, dim=1)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D)) + self.mask
        attn = torch.softmax(scores, dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(B, T, H * D)
        h = x + self.wo(out)
        z = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(z)) * self.w3(z))


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim, dtype=dtype)]


def get_init_inputs():
    return [dim, n_heads, n_kv_heads, ffn_dim, seq_len]
