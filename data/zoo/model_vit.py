"""Small Vision Transformer: 64x64 images, 8x8 patches (64 tokens + CLS), dim 256, 6 layers, 8 heads.

The patch embedding is a stride-8 conv. The tokens are flattened and
transposed, a learned class token is expanded over the batch and
concatenated, and a position embedding is added. The encoder is pre-norm
(LayerNorm -> MHSA -> residual, LayerNorm -> GELU MLP -> residual), and
the class token (x[:, 0]) goes through a linear head. With 65 tokens the
attention matmuls are tiny and the GEMMs dominate. This exercises
expand/cat/indexing data movement inside a transformer.
"""

import torch
import torch.nn as nn

BATCH = 4
IMAGE_SIZE = 64
PATCH_SIZE = 8
IN_CHANNELS = 3
DIM = 256
DEPTH = 6
NUM_HEADS = 8
MLP_DIM = 1024
NUM_CLASSES = 100


class Attention(nn.Module):
    """Multi-head self-attention with a fused QKV projection and explicit softmax(QK^T)V."""

    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    """Pre-norm encoder block: x + Attn(LN(x)); x + MLP(LN(x)) with GELU."""

    def __init__(self, dim, num_heads, mlp_dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_dim), nn.GELU(), nn.Linear(mlp_dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    """ViT: conv patch embedding, class token, learned position embedding, encoder, head."""

    def __init__(self, image_size, patch_size, in_channels, dim, depth, num_heads, mlp_dim, num_classes):
        super().__init__()
        num_patches = (image_size // patch_size) ** 2
        self.patch_embed = nn.Conv2d(in_channels, dim, kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, num_heads, mlp_dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(img).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IMAGE_SIZE, PATCH_SIZE, IN_CHANNELS, DIM, DEPTH, NUM_HEADS, MLP_DIM, NUM_CLASSES]
