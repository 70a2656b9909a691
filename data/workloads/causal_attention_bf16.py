"""Causal self-attention in bf16 through PyTorch's fused SDPA (B=2, H=16, S=2048, head dim 128).

``F.scaled_dot_product_attention(q, k, v, is_causal=True)`` is what LLaMA-style models call. On a
GPU, eager PyTorch runs it as one FlashAttention kernel: both products in bf16 on the tensor cores,
softmax on chip, and the key blocks above the diagonal skipped. solar bounds that computation, not
torch.export's math decomposition (float32 upcasts, the full S x S product, a materialised mask):
2 * 2 * 16 * (2048 * 2049 / 2) * 128 MACs at the bf16 tensor-core peak, q, k, v and the output
through DRAM once.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
num_heads = 16
seq_len = 2048
head_dim = 128


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16)
    k = torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16)
    v = torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []
