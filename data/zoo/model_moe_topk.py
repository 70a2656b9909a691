"""Top-2 mixture-of-experts FFN with 8 experts over 512 tokens (B=4, T=128, D=512, FFN 1024).

A linear router gives per-token expert probabilities (softmax), and topk
picks two experts per token, renormalising their weights. For static
shapes every expert runs on every token: x is repeated 8x and two bmm's
apply the stacked expert weights, with GELU in between. The chosen experts'
outputs are then picked with torch.gather and mixed by the top-k
weights. A load-balancing auxiliary loss builds a one-hot dispatch mask
with scatter and is returned as a second output. The dense formulation
does E/k = 4x the FLOPs a token-routed kernel needs. A Speed-of-Light
analysis should report both numbers.
"""

import torch
import torch.nn as nn

BATCH = 4
SEQ_LEN = 128
DIM = 512
FFN_DIM = 1024
NUM_EXPERTS = 8
TOP_K = 2


class Model(nn.Module):
    """Router -> softmax -> topk -> dense experts (repeat + bmm) -> gather -> weighted sum; plus aux loss."""

    def __init__(self, dim, ffn_dim, num_experts, top_k):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, ffn_dim) / dim ** 0.5)
        self.b1 = nn.Parameter(torch.zeros(num_experts, 1, ffn_dim))
        self.w2 = nn.Parameter(torch.randn(num_experts, ffn_dim, dim) / ffn_dim ** 0.5)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor):
        B, T, D = x.shape
        tokens = x.reshape(B * T, D)
        probs = torch.softmax(self.router(tokens), dim=-1)
        top_w, top_i = torch.topk(probs, self.top_k, dim=-1)
        top_w = top_w / top_w.sum(dim=-1, keepdim=True)

        xe = tokens.unsqueeze(0).repeat(self.num_experts, 1, 1)
        h = self.act(torch.bmm(xe, self.w1) + self.b1)
        ye = torch.bmm(h, self.w2).permute(1, 0, 2)
        chosen = torch.gather(ye, 1, top_i.unsqueeze(-1).expand(-1, -1, D))
        out = (chosen * top_w.unsqueeze(-1)).sum(dim=1).view(B, T, D)

        dispatch = torch.zeros_like(probs).scatter(1, top_i, 1.0)
        aux_loss = self.num_experts * (dispatch.mean(dim=0) * probs.mean(dim=0)).sum()
        return out, aux_loss


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, DIM)]


def get_init_inputs():
    return [DIM, FFN_DIM, NUM_EXPERTS, TOP_K]
