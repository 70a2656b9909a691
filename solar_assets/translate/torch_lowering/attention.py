"""``scaled_dot_product_attention`` as the fused kernels run it, not as its math decomposition.

``torch.export``'s core-ATen decomposition of SDPA is its math fallback: q, k and v upcast to
float32, the full ``L × S`` score matrix multiplied, a causal mask built as a boolean tensor and
applied after the product. Eager PyTorch on a GPU runs FlashAttention or the memory-efficient
kernel instead: both contractions at the input dtype on the tensor cores (float32 accumulation
is free there), softmax on chip, and — under ``is_causal`` — the key blocks above the diagonal
skipped. A bound of the decomposition is beaten by those kernels (15–30× at bf16), so the tracer
keeps SDPA whole (``torch_tracer.decomposition_table``) and lowers it here:

    S[b, i, j] += Q[b, i, e] * K[b, j, e] * scale        (where j <= i under is_causal)
    S'         =  S masked (bool mask: -inf where False; float mask: added)
    M[b, i]    max= S'[b, i, j]                         (row maximum)
    L[b, i]    += exp(S'[b, i, j] - M[b, i])            (row sum)
    P[b, i, j] =  exp(S'[b, i, j] - M[b, i]) / L[b, i]
    O[b, i, d] += P[b, i, j] * V[b, j, d]

Every kernel carries the op's origin, so the unfused bound charges one eager kernel: q, k, v,
the mask when it is an input, and the output, once (``graph.op_groups``). Intermediates are
declared at the query's dtype, so both contractions run on that dtype's matrix peak
(``bounds.units``; a float32 SDPA takes the fastest float32 path its kernels use, see
``Fp32Math``); the executor computes them in float64 as it does every kernel. ``is_causal`` is
the kernels' ``where j <= i`` (PyTorch's mask is top-left aligned: ``tril(ones(L, S))``), so
only the S(S+1)/2 products per head that can reach an unmasked output are counted
(``ir.domain``). A mask passed as a tensor keeps the full count: its values are unknown to a
shape-only analysis. Grouped-query attention (``enable_gqa``) splits the query-head loop into
``(kv head, group)`` so that query head ``hk·G + g`` reads key/value head ``hk``, as
``repeat_interleave`` does, without copying k and v.
"""
from __future__ import annotations

import math
from typing import Any

import torch

from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import loop_vars
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers

aten = torch.ops.aten

def _batch_index(x: SymTensor, out_batch: list[Lin], batch_shape: tuple[int, ...], head: int | None,
                 kv_head: Lin | None) -> list[Lin]:
    """Index of ``x``'s batch dims at the output's batch position (numpy broadcasting); with
    grouped-query attention, the head dim of k and v reads ``kv_head`` instead."""
    lead = len(x.shape) - 2
    offset = len(batch_shape) - lead
    idx = []
    for d in range(lead):
        nd = d + offset
        if kv_head is not None and nd == head:
            idx.append(kv_head if x.shape[d] != 1 else Lin.constant(0))
        elif x.shape[d] == 1 and batch_shape[nd] != 1:
            idx.append(Lin.constant(0))
        else:
            idx.append(out_batch[nd])
    return idx


@lowers(aten.scaled_dot_product_attention)
def sdpa_lowering(c: Ctx, query: SymTensor, key: SymTensor, value: SymTensor, attn_mask: Any = None,
                  dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                  enable_gqa: bool = False) -> SymTensor:
    if dropout_p:
        raise LoweringGap(f"dropout_p={dropout_p} draws random numbers; attention is lowered without dropout "
                          "(pass dropout_p=0.0 or run the model in eval mode)")
    if is_causal and attn_mask is not None:
        raise LoweringGap("is_causal together with attn_mask")
    out_shape = c.out_shape()
    dtype = c.out_dtype()
    batch_shape = tuple(out_shape[:-2])
    L, S, E, Ev = query.shape[-2], key.shape[-2], query.shape[-1], value.shape[-1]
    scale = 1.0 / math.sqrt(E) if scale is None else float(scale)
    nb = len(batch_shape)
    heads_q, heads_kv = (query.shape[-3], key.shape[-3]) if len(query.shape) >= 3 and len(key.shape) >= 3 else (1, 1)
    bv = loop_vars("b", nb)
    head, kv_head = None, None
    batch_loops = list(zip(bv, batch_shape))
    out_batch = [Lin.of(v) for v in bv]
    if enable_gqa and heads_q != heads_kv:
        if heads_kv == 0 or heads_q % heads_kv:
            raise LoweringGap(f"enable_gqa with {heads_q} query heads over {heads_kv} key/value heads")
        group = heads_q // heads_kv
        head = nb - 1
        batch_loops[head:head + 1] = [("hk", heads_kv), ("g", group)]
        out_batch[head] = Lin.of("hk").scale(group) + Lin.of("g")
        kv_head = Lin.of("hk")
    ob = out_batch
    qb = _batch_index(query, ob, batch_shape, None, None)
    kb = _batch_index(key, ob, batch_shape, head, kv_head)
    vb = _batch_index(value, ob, batch_shape, head, kv_head)
    i, j, e, d = Lin.of("i"), Lin.of("j"), Lin.of("e"), Lin.of("d")
    where = "j <= i" if is_causal else None
    b = c.b

    def tmp(hint: str, shape: tuple[int, ...]) -> SymTensor:
        return b.declare(f"{c.name}_{hint}", shape, dtype)

    def kernel(hint: str, loops: list[tuple[str, int]], out: str, update: str, expr: str) -> None:
        b.kernel(f"{c.name}_{hint}", loops, out, update, expr, where=where)

    rows = batch_loops + [("i", L)]
    scores = tmp("scores", batch_shape + (L, S))
    kernel("scores", rows + [("j", S), ("e", E)], scores.access(ob + [i, j]), "+=",
           f"{query.access(qb + [i, e])} * {key.access(kb + [j, e])} * {scale!r}")
    if attn_mask is not None:
        mask_at = c.b.broadcast_access(attn_mask, ob + [i, j], batch_shape + (L, S))
        masked = tmp("masked", batch_shape + (L, S))
        expr = (f"select({mask_at}, {scores.access(ob + [i, j])}, -inf)" if attn_mask.dtype == "bool"
                else f"{scores.access(ob + [i, j])} + {mask_at}")
        kernel("mask", rows + [("j", S)], masked.access(ob + [i, j]), "=", expr)
        scores = masked
    row_max, row_sum = tmp("max", batch_shape + (L,)), tmp("sum", batch_shape + (L,))
    s_at, m_at, l_at = scores.access(ob + [i, j]), row_max.access(ob + [i]), row_sum.access(ob + [i])
    kernel("max", rows + [("j", S)], m_at, "max=", s_at)
    kernel("sum", rows + [("j", S)], l_at, "+=", f"exp({s_at} - {m_at})")
    probs = tmp("probs", batch_shape + (L, S))
    kernel("probs", rows + [("j", S)], probs.access(ob + [i, j]), "=", f"exp({s_at} - {m_at}) / {l_at}")
    out = c.new_output()
    kernel("out", rows + [("d", Ev), ("j", S)], out.access(ob + [i, d]), "+=",
           f"{probs.access(ob + [i, j])} * {value.access(vb + [j, d])}")
    return out
