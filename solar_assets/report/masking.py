"""What a report row says about masks: the products a known mask removes, or that a tensor mask removes none.

A contraction under a ``where`` condition (causal SDPA, a ``tril`` mask built in ``forward``) counts
only the products the condition keeps; the row names the share so a reader comparing with a FLOP
counter that charges the dense product sees why the figures differ. A mask that is an input or a
buffer has values a shape-only analysis does not know: every product is counted (a lower bound
all the same), and the row says so.
"""
from __future__ import annotations

from typing import Any


def masked_products_note(graph: Any) -> str:
    """``masked: 50.8 % of products (where j <= i)``, ``mask attn_mask is a tensor: every product
    counted``, both joined by '; ', or ''."""
    kept = total = 0
    conditions: list[str] = []
    for node in graph.nodes:
        pk = getattr(node, "parsed", None)
        if pk is None or not pk.is_sum_of_products or not pk.where:
            continue
        kept += node.macs
        total += pk.box_iterations * max(1, node.repeat)
        if pk.kernel.where not in conditions:
            conditions.append(pk.kernel.where)
    notes = []
    if total:
        notes.append(f"masked: {100.0 * kept / total:.1f} % of products (where {'; '.join(conditions)})")
    tensors = graph.program.tensor_map()
    producer = {n.output: n for n in graph.nodes}
    masks: list[str] = []

    def mask_sources(name: str, depth: int) -> None:
        """The inputs and weights a boolean mask is computed from (``bias[:, :, :T, :T] == 0``)."""
        t = tensors[name]
        if t.role in ("input", "weight"):
            if name not in masks:
                masks.append(name)
            return
        node = producer.get(name)
        if depth and node is not None and node.parsed is not None and not node.macs:
            for acc in node.parsed.reads:
                mask_sources(acc.tensor, depth - 1)

    def fills_minus_inf(pk: Any) -> bool:  # ``select(mask, -inf, scores)``, the -inf inline or a scalar kernel
        return "-inf" in pk.kernel.expr or any(
            (p := producer.get(acc.tensor)) is not None and p.parsed is not None and "-inf" in p.parsed.kernel.expr
            and not tensors[acc.tensor].shape for acc in pk.reads)

    for node in graph.nodes:
        pk = getattr(node, "parsed", None)
        if pk is None or not (pk.kernel.name.endswith("_mask") or "select(" in pk.kernel.expr and fills_minus_inf(pk)):
            continue
        for acc in pk.reads:
            if tensors[acc.tensor].dtype == "bool" or pk.kernel.name.endswith("_mask") \
                    and tensors[acc.tensor].role in ("input", "weight"):
                mask_sources(acc.tensor, 3)
    if masks:
        notes.append(f"mask {', '.join(masks)} is a tensor (values unknown to a shape-only count): every product "
                     f"counted")
    return "; ".join(notes)
