"""Mamba-style block with a selective state-space scan written as a Python loop over 64 steps.

Sizes: B=2, L=64, d_model=128, expand 2 (d_inner=256), d_state=16,
conv width 4, dt rank 8. It runs RMSNorm -> in_proj -> chunk into (x, z)
-> causal depthwise conv1d (F.pad on the left) -> SiLU -> x_proj, split
into (dt, B, C) -> dt_proj + softplus. Discretisation gives
dA = exp(dt * A) and dBx = dt * B * x over (B, L, d_inner, d_state). The
scan h_t = dA_t * h_{t-1} + dBx_t, y_t = <h_t, C_t> is a loop over the
static length: export unrolls it into 64 copies of a few small
elementwise ops plus a reduction, stacked with torch.stack. Then come the
skip D * x, the SiLU(z) gate, out_proj and the residual. The recurrence
is latency-bound in eager, while its Speed-of-Light bound (a parallel
scan) is memory-bound on the (B, L, d_inner, d_state) tensors.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ_LEN = 64
D_MODEL = 128
EXPAND = 2
D_STATE = 16
D_CONV = 4
DT_RANK = 8


class Model(nn.Module):
    """Pre-norm residual Mamba mixer with an explicit sequential selective scan."""

    def __init__(self, d_model, expand, d_state, d_conv, dt_rank):
        super().__init__()
        d_inner = expand * d_model
        self.d_state, self.d_conv, self.dt_rank = d_state, d_conv, dt_rank
        self.norm_weight = nn.Parameter(torch.ones(d_model))
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        self.conv1d = nn.Conv1d(d_inner, d_inner, d_conv, groups=d_inner, bias=True)
        self.x_proj = nn.Linear(d_inner, dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(dt_rank, d_inner, bias=True)
        A = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(d_inner))
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        residual = hidden
        h_in = hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + 1e-5) * self.norm_weight
        x, z = self.in_proj(h_in).chunk(2, dim=-1)                      # (B, L, Di) each
        x = F.pad(x.transpose(1, 2), (self.d_conv - 1, 0))               # causal left pad
        x = F.silu(self.conv1d(x)).transpose(1, 2)                       # (B, L, Di)
        dt, Bm, Cm = torch.split(self.x_proj(x), [self.dt_rank, self.d_state, self.d_state], dim=-1)
        dt = F.softplus(self.dt_proj(dt))                                # (B, L, Di)
        A = -torch.exp(self.A_log)                                       # (Di, N)
        dA = torch.exp(dt.unsqueeze(-1) * A)                             # (B, L, Di, N)
        dBx = dt.unsqueeze(-1) * Bm.unsqueeze(2) * x.unsqueeze(-1)       # (B, L, Di, N)
        h = x.new_zeros(x.shape[0], x.shape[2], self.d_state)            # (B, Di, N)
        ys = []
        for t in range(x.shape[1]):
            h = dA[:, t] * h + dBx[:, t]
            ys.append((h * Cm[:, t].unsqueeze(1)).sum(-1))               # (B, Di)
        y = torch.stack(ys, dim=1)                                       # (B, L, Di)
        y = (y + x * self.D) * F.silu(z)
        return residual + self.out_proj(y)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, EXPAND, D_STATE, D_CONV, DT_RANK]
