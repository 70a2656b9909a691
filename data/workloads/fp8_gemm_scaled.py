"""An fp8 GEMM with per-tensor scales, as inference runs it (M=128 tokens, K=512, N=1024).

    Y = (A @ Bᵀ) · scale_a · scale_b  in bfloat16

The activations ``a`` (M × K) and the weight ``b`` (N × K, row-major as nn.Linear keeps it)
are stored as float8_e4m3fn with one float32 scale each (``amax / 448``, the e4m3 range);
``torch._scaled_mm`` multiplies the fp8 operands with float32 accumulation and writes bf16.
The inputs are quantised in ``get_inputs``, so what the model reads is 1 byte an element.
"""

import torch
import torch.nn as nn

batch_size = 128
in_features = 512
out_features = 1024
E4M3_MAX = 448.0


def quantize(x):
    """Per-tensor fp8 quantisation: the scale maps the largest magnitude to the e4m3 maximum."""
    scale = x.abs().max().float() / E4M3_MAX
    return (x / scale).to(torch.float8_e4m3fn), scale


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        w, w_scale = quantize(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.register_buffer("weight", w)
        self.register_buffer("weight_scale", w_scale)

    def forward(self, a, a_scale):
        return torch._scaled_mm(a, self.weight.t(), scale_a=a_scale, scale_b=self.weight_scale,
                                out_dtype=torch.bfloat16)


def get_inputs():
    a, a_scale = quantize(torch.randn(batch_size, in_features))
    return [a, a_scale]


def get_init_inputs():
    return [in_features, out_features]
