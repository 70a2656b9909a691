"""Sizes that must keep an order: a causal-mask buffer of ``max_seqlen`` sliced to the input's
``seq_len``. The sequence length is a reduction length (attention sums over the keys), so the
"all but reduction lengths" tier keeps it while scaling ``max_seqlen`` below it and the export
fails; the search retries with ``max_seqlen`` as written, sees that tier buys nothing over the
batch tier, and scales everything together (KernelBench level3/44_MiniGPTBlock's shape)."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from solar_assets import pipeline
from solar_assets.sizing import ValidationBudget
from solar_assets.sizing import crossed_order

CAUSAL_BLOCK = '''\
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Masked self-attention; the causal mask is a buffer of max_seqlen, sliced to the input's length."""

    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("mask", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(self.n_embd, dim=2)
        q = q.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        k = k.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        v = v.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


batch_size = 64
max_seqlen = 256
seq_len = 128
n_embd = 96
n_head = 8


def get_inputs():
    return [torch.rand(batch_size, seq_len, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, max_seqlen]
'''
# Full size: 318 MiB / 5.5e8 iterations; the batch tier bottoms out at batch 2 (10.8 MiB, 1.7e7).
SMALL_BUDGET = ValidationBudget(tensor_bytes=4 << 20, iterations=4_000_000)


def test_crossed_order_names_the_constants_scaled_below_a_kept_one():
    values = {"batch_size": 64, "max_seqlen": 256, "seq_len": 128, "n_embd": 96, "n_head": 8}
    assert crossed_order(values, {"batch_size": 9, "max_seqlen": 27, "n_head": 3}) == {"max_seqlen"}
    # scaled together, the order holds: nothing to keep
    assert crossed_order(values, {"batch_size": 9, "max_seqlen": 27, "seq_len": 9, "n_embd": 9}) == set()
    # still above every kept constant it was above
    assert crossed_order(values, {"max_seqlen": 129}) == set()


@pytest.mark.slow
def test_mask_buffer_longer_than_the_sequence_is_scaled_with_it(tmp_path: Path):
    path = tmp_path / "causal_block.py"
    path.write_text(CAUSAL_BLOCK)
    result = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=tmp_path / "cache",
                                       validation_budget=SMALL_BUDGET)
    assert result.ok, result.error
    row = result.rows[0]
    assert row.validated and row.max_abs_error < 1e-4
    sizes = dict(part.split("=") for part in row.validated_size.split(","))  # a scaled size, not node-wise
    assert set(sizes) == {"batch_size", "max_seqlen", "seq_len", "n_embd", "n_head"}, row.validated_size
    assert int(sizes["max_seqlen"]) >= int(sizes["seq_len"])
    assert int(sizes["n_embd"]) % int(sizes["n_head"]) == 0
    # the bounds are of the full size: the MACs torch counts there (qkv, q@kᵀ, att@v, proj)
    namespace: dict[str, object] = {}
    exec(compile(CAUSAL_BLOCK, str(path), "exec"), namespace)
    model = namespace["Model"](*namespace["get_init_inputs"]())
    with FlopCounterMode(display=False) as counter:
        with torch.no_grad():
            model(*namespace["get_inputs"]())
    b, t, c, h = 64, 128, 96, 8
    hand = b * t * c * 3 * c + 2 * b * h * t * t * (c // h) + b * t * c * c
    assert counter.get_total_flops() == 2 * hand
    assert row.macs == hand


def test_an_alias_kept_as_written_is_not_an_order():
    """``num_channels = embed_dim`` left as written is the same size under another name: scaling
    ``embed_dim`` below it is no crossed order (a vision-attention block sized this way validated
    scaled before the retry existed and must still), while a mask buffer longer than the kept
    sequence length is one."""
    from solar_assets.sizing import crossed_order

    vision = {"batch_size": 2, "embed_dim": 128, "num_heads": 4, "num_channels": 128,
              "image_height": 128, "image_width": 128}
    assert crossed_order(vision, {"embed_dim": 15, "image_height": 15, "image_width": 15}) == set()
    causal = {"batch_size": 128, "max_seqlen": 1024, "seq_len": 512, "n_embd": 768, "n_head": 8}
    assert crossed_order(causal, {"batch_size": 15, "max_seqlen": 127}) == {"max_seqlen"}
