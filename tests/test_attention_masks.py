"""Attention masks built in ``forward`` remove the products they mask (issue 23, item 2).

Causal (and banded) self-attention written out as people write it — scores, ``masked_fill`` with a
mask made from ``tril``/``triu``/``arange`` in ``forward``, softmax, values — counts only the
products the mask keeps, exactly: S(S+1)/2 per head and contraction for causal, the band's own
count for a sliding window. A mask held in a buffer keeps the full count, and the row says so.
Every expected count is worked here from the shapes.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from solar_assets.golden import make_golden
from solar_assets.graph import build_einsum_graph
from solar_assets.report.masking import masked_products_note
from solar_assets.translate import trace_torch
from solar_assets.validate import validate_program
from solar_assets.workloads import read_workload_source

B, H, S, E = 2, 3, 24, 16

EXPLICIT = '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = {B}
n_head = {H}
seq_len = {S}
head_dim = {E}


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, q, k, v):
        T = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        {mask}
        att = F.softmax(att, dim=-1)
        return att @ v


def get_inputs():
    return [torch.randn(batch_size, n_head, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return []
'''

MASKS = {
    "tril_eq_zero": 'att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))',
    "triu_bool": 'att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1), float("-inf"))',
    "tril_bool_not": ('keep = torch.tril(torch.ones(T, T)).bool()\n'
                      '        att = att.masked_fill(~keep, torch.finfo(att.dtype).min)'),
    "arange_causal": ('idx = torch.arange(T)\n'
                      '        att = att.masked_fill(idx[None, :] > idx[:, None], float("-inf"))'),
}

CAUSAL_PRODUCTS = S * (S + 1) // 2  # per head: row i keeps keys 0..i


def _source(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return read_workload_source(path)


def _validated_graph(src):
    program = trace_torch(src).program
    result = validate_program(program, make_golden(src), source=src.path)
    assert result.ok, result.summary()
    return build_einsum_graph(program)


@pytest.mark.parametrize("name", sorted(MASKS))
def test_a_causal_mask_built_in_forward_halves_both_contractions(tmp_path, name):
    graph = _validated_graph(_source(tmp_path, name, EXPLICIT.format(B=B, H=H, S=S, E=E, mask=MASKS[name])))
    # q·kᵀ and p·v: each B·H·S(S+1)/2 products of length E
    assert graph.macs == 2 * B * H * CAUSAL_PRODUCTS * E
    note = masked_products_note(graph)
    assert note.startswith(f"masked: {100 * CAUSAL_PRODUCTS / S**2:.1f} % of products")


def test_a_sliding_window_counts_the_band(tmp_path):
    window = 5
    mask = ('idx = torch.arange(T)\n'
            '        dist = idx[:, None] - idx[None, :]\n'
            f'        band = (dist >= 0) & (dist < {window})\n'
            '        att = att.masked_fill(~band, float("-inf"))')
    graph = _validated_graph(_source(tmp_path, "window", EXPLICIT.format(B=B, H=H, S=S, E=E, mask=mask)))
    band = sum(min(i + 1, window) for i in range(S))  # row i keeps keys max(0, i-4)..i
    assert graph.macs == 2 * B * H * band * E


def test_an_unmasked_explicit_attention_keeps_every_product(tmp_path):
    graph = _validated_graph(_source(tmp_path, "dense", EXPLICIT.format(B=B, H=H, S=S, E=E, mask="pass")))
    assert graph.macs == 2 * B * H * S * S * E
    assert masked_products_note(graph) == ""


BUFFER_MASK = '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, max_seqlen):
        super(Model, self).__init__()
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))

    def forward(self, q, k, v):
        T = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        return F.softmax(att, dim=-1) @ v


def get_inputs():
    return [torch.randn({B}, {H}, {S}, {E}) for _ in range(3)]


def get_init_inputs():
    return [{S}]
'''


def test_a_mask_in_a_buffer_keeps_the_full_count_and_says_so(tmp_path):
    graph = _validated_graph(_source(tmp_path, "buffer_mask", BUFFER_MASK.format(B=B, H=H, S=S, E=E)))
    assert graph.macs == 2 * B * H * S * S * E
    note = masked_products_note(graph)
    assert "is a tensor" in note and "every product counted" in note


def test_an_sdpa_mask_input_is_named(tmp_path):
    text = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def get_inputs():
    return [torch.randn(2, 3, 8, 4), torch.randn(2, 3, 8, 4), torch.randn(2, 3, 8, 4), torch.rand(8, 8) > 0.2]


def get_init_inputs():
    return []
'''
    graph = _validated_graph(_source(tmp_path, "sdpa_mask", text))
    assert "every product counted" in masked_products_note(graph)
