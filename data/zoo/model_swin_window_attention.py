"""Two Swin Transformer blocks (regular then shifted windows) on a 56x56 map, C = 96, 3 heads, window 7.

This is Swin-T stage 1 at batch 4. Each block LayerNorms the (B, H*W, C)
tokens, cyclically shifts them with torch.roll (shifted block only),
partitions them into 7x7 windows (view -> permute -> contiguous -> view),
and runs attention inside each of the 64 windows with a learned relative
position bias gathered from a table by an index buffer. The shifted block
adds a -100 mask between tokens from different regions. It then reverses
the partition and shift and adds an MLP. Attention is cheap (49 tokens
per window), so this model is dominated by layout ops and memory-bound
elementwise work. It tests roll, advanced indexing and
many-view-chains.
"""

import torch
import torch.nn as nn

BATCH = 4
HEIGHT = 56
WIDTH = 56
DIM = 96
NUM_HEADS = 3
WINDOW_SIZE = 7
MLP_RATIO = 4


def window_partition(x: torch.Tensor, ws: int) -> torch.Tensor:
    B, H, W, C = x.shape
    x = x.view(B, H // ws, ws, W // ws, ws, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws * ws, C)


def window_reverse(windows: torch.Tensor, ws: int, H: int, W: int) -> torch.Tensor:
    B = windows.shape[0] // ((H // ws) * (W // ws))
    x = windows.view(B, H // ws, W // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class WindowAttention(nn.Module):
    """Multi-head attention inside each window with a relative position bias."""

    def __init__(self, dim, window_size, num_heads):
        super().__init__()
        self.window_size = window_size
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.relative_position_bias_table = nn.Parameter(
            torch.randn((2 * window_size - 1) ** 2, num_heads) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(window_size), torch.arange(window_size),
                                            indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += window_size - 1
        rel[:, :, 1] += window_size - 1
        rel[:, :, 0] *= 2 * window_size - 1
        self.register_buffer("relative_position_index", rel.sum(-1))
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        B_, N, C = x.shape
        qkv = self.qkv(x).reshape(B_, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)]
        bias = bias.view(N, N, -1).permute(2, 0, 1).contiguous()
        attn = attn + bias.unsqueeze(0)
        if mask is not None:
            n_windows = mask.shape[0]
            attn = attn.view(B_ // n_windows, n_windows, self.num_heads, N, N)
            attn = attn + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.num_heads, N, N)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
        return self.proj(x)


class SwinBlock(nn.Module):
    """LN -> (shifted) window attention -> residual; LN -> GELU MLP -> residual."""

    def __init__(self, dim, height, width, num_heads, window_size, shift_size, mlp_ratio):
        super().__init__()
        self.height, self.width = height, width
        self.window_size, self.shift_size = window_size, shift_size
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, window_size, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * mlp_ratio), nn.GELU(), nn.Linear(dim * mlp_ratio, dim))
        if shift_size > 0:
            img_mask = torch.zeros(1, height, width, 1)
            cnt = 0
            regions = (slice(0, -window_size), slice(-window_size, -shift_size), slice(-shift_size, None))
            for hs in regions:
                for ws in regions:
                    img_mask[:, hs, ws, :] = cnt
                    cnt += 1
            mw = window_partition(img_mask, window_size).squeeze(-1)
            attn_mask = mw.unsqueeze(1) - mw.unsqueeze(2)
            attn_mask = attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(attn_mask == 0, 0.0)
            self.register_buffer("attn_mask", attn_mask)
        else:
            self.attn_mask = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        H, W, ws, s = self.height, self.width, self.window_size, self.shift_size
        B, L, C = x.shape
        shortcut = x
        x = self.norm1(x).view(B, H, W, C)
        if s > 0:
            x = torch.roll(x, shifts=(-s, -s), dims=(1, 2))
        windows = self.attn(window_partition(x, ws), self.attn_mask)
        x = window_reverse(windows, ws, H, W)
        if s > 0:
            x = torch.roll(x, shifts=(s, s), dims=(1, 2))
        x = shortcut + x.view(B, H * W, C)
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    """W-MSA block followed by an SW-MSA block (shift = window // 2)."""

    def __init__(self, dim, height, width, num_heads, window_size, mlp_ratio):
        super().__init__()
        self.block1 = SwinBlock(dim, height, width, num_heads, window_size, 0, mlp_ratio)
        self.block2 = SwinBlock(dim, height, width, num_heads, window_size, window_size // 2, mlp_ratio)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block2(self.block1(x))


def get_inputs():
    return [torch.randn(BATCH, HEIGHT * WIDTH, DIM)]


def get_init_inputs():
    return [DIM, HEIGHT, WIDTH, NUM_HEADS, WINDOW_SIZE, MLP_RATIO]
