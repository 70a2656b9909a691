"""GPT-2 (124M-width) transformer block with causal self-attention: B=4, T=256, E=768, 12 heads.

This is the minGPT block. A fused QKV Linear is split into q/k/v, heads
are separated with view+transpose, scores are scaled, masked with
masked_fill against a registered lower-triangular buffer (-inf above the
diagonal), softmaxed, dropped out (eval: identity) and applied to V.
Heads are merged with transpose+contiguous+view and projected. The MLP
uses the written-out tanh GELU. Half of the (B, H, T, T) score work is
masked away, which a causal-aware Speed-of-Light bound can skip.
"""

import math

import torch
import torch.nn as nn

BATCH = 4
SEQ_LEN = 256
N_EMBD = 768
N_HEAD = 12


class NewGELU(nn.Module):
    """GPT-2's tanh-approximate GELU, written out as in minGPT."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


class CausalSelfAttention(nn.Module):
    """Fused QKV projection, split, causal masked_fill, softmax, dropout (eval), output projection."""

    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        self.register_buffer(
            "bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen)
        )
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_dropout(torch.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Model(nn.Module):
    """GPT-2 block: x + attn(ln_1(x)); x + mlp(ln_2(x)) with NewGELU."""

    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, max_seqlen)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.act = NewGELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        x = x + self.dropout(self.c_proj(self.act(self.c_fc(self.ln_2(x)))))
        return x


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, N_EMBD)]


def get_init_inputs():
    return [N_EMBD, N_HEAD, SEQ_LEN]
