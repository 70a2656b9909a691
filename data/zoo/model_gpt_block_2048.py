"""PRODUCTION SIZE: GPT block with causal attention at long context: B=2, T=2048, E=1024, 16 heads.

This is a GPT-2-medium-width block at a 2K-token context. The four GEMMs
(QKV, output projection, 1024 -> 4096 -> 1024 MLP) total ~103 GFLOP, and
the QK^T / AV batched matmuls ~34 GFLOP. The (2, 16, 2048, 2048) score
tensor is 512 MiB per materialisation. Its masked_fill, softmax and
-inf masking make an unfused eager run memory-heavy (over 1 GiB
peak), which is exactly the traffic a FlashAttention-style fused bound
removes. Eager forward takes several seconds on a 2-core CPU (allowed up
to ~20 s for production-size zoo files); validate at a scaled-down SEQ_LEN.
model_gpt_block is the small variant.
"""

import math

import torch
import torch.nn as nn

BATCH = 2
SEQ_LEN = 2048
N_EMBD = 1024
N_HEAD = 16


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
