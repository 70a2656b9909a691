"""Attention masks written out in ``forward``: the contractions skip the products the mask removes.

Causal self-attention is often spelled out instead of calling SDPA::

    att = (q @ k.transpose(-2, -1)) * scale
    att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
    y = F.softmax(att, dim=-1) @ v

torch.export turns the mask into ``where(arange - arange <= 0, 1, 0) == 0`` and the fill into
``where(mask, -inf, att)``. Lowered as written, both contractions count every one of the T × T
products per head, where a FlashAttention-style kernel (or any kernel that skips masked tiles)
computes only those on or below the diagonal: the "bound" would be beaten by about 2×.

``masked_attention`` finds the pattern on the exported graph: a ``where`` filling ``-inf`` under
a condition that is a known function of the last two indices (``inplace.index_predicate``),
whose other branch comes from a contraction (``mm``/``bmm``) through single-use scalings and
views, and whose only use is a softmax over the last dim feeding, through single-use views, the
left operand of another contraction. A score the fill overwrites is never needed, and a
probability it zeroes adds nothing, so each contraction gets the kept condition as a ``where``
(on its output's last two indices for the scores, on its left operand's for the values). The IR
still computes the whole output and validates against eager. A mask given as a tensor (an input
or a buffer) has values a shape-only analysis does not know, and keeps the full count.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from solar_assets.translate.torch_lowering.inplace import (
    NEGATED,
    _constant,
    packet_name,
    _shape,
    condition_text,
    index_predicate,
)

CONTRACTIONS = ("mm", "bmm")
PASS_THROUGH = ("view", "_unsafe_view", "reshape", "expand", "clone", "alias", "contiguous")
SCALINGS = ("mul", "div", "add", "sub")


@dataclass(frozen=True)
class MaskedContraction:
    """A contraction whose products outside ``condition`` cannot affect the output.

    ``condition`` is written over ``row`` and ``col``: the last two indices of the contraction's
    output (``operand == "out"``) or of its left operand (``operand == "a"``)."""

    node: str
    condition: str
    operand: str


REMOVED_BELOW = -1e30
"""A fill at or below this (``-inf``, ``torch.finfo(torch.float32).min``) makes softmax's weight exactly 0."""


def _removes(fill: float | None) -> bool:
    return fill is not None and fill <= REMOVED_BELOW


def _only_user(node: Any) -> Any | None:
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _scores_contraction(x: Any) -> Any | None:
    """The mm/bmm ``x`` comes from through single-use views and scalings by constants."""
    import torch.fx

    while isinstance(x, torch.fx.Node) and x.op == "call_function":
        name = packet_name(x)
        if name in CONTRACTIONS:
            return x
        if len(x.users) != 1:
            return None
        if name in PASS_THROUGH:
            x = x.args[0]
        elif name in SCALINGS and isinstance(x.args[1], (int, float)):
            x = x.args[0]
        else:
            return None
    return None


def _values_contraction(probs: Any) -> Any | None:
    """The mm/bmm whose left operand is ``probs`` through single-use views."""
    x = probs
    while True:
        user = _only_user(x)
        if user is None:
            return None
        name = packet_name(user)
        if name in CONTRACTIONS:
            return user if user.args[0] is x else None
        if name not in PASS_THROUGH:
            return None
        x = user


def _trailing_condition(clauses: list[tuple[str, str, str]], rank: int) -> str | None:
    """The kept condition over ``row``/``col`` when the mask names only the last two indices."""
    text = condition_text(clauses)
    if text is None:
        return None
    names = {f"i{rank - 2}": "row", f"i{rank - 1}": "col"}
    used = set(re.findall(r"\bi\d+\b", text))
    if not used or not used <= set(names):
        return None
    return re.sub(r"\bi\d+\b", lambda m: names[m.group(0)], text)


def masked_attention(graph: Any) -> list[MaskedContraction]:
    """The contractions of ``graph`` that a known attention mask thins (module docstring)."""
    found: list[MaskedContraction] = []
    for node in graph.nodes:
        if node.op != "call_function" or packet_name(node) != "where" or len(node.args) != 3:
            continue
        cond, a, b = node.args
        shape = _shape(node)
        if shape is None or len(shape) < 2 or not hasattr(cond, "op"):
            continue
        if _removes(_constant(a)):  # where(masked, -inf, scores): kept = not masked
            scores = b
            if packet_name(cond) in ("logical_not", "bitwise_not"):  # masked_fill(~band, -inf): kept = band
                kept = index_predicate(cond.args[0], len(shape))
            else:
                clauses = index_predicate(cond, len(shape))
                if clauses is None or len(clauses) != 1:
                    continue
                left, op, right = clauses[0]
                kept = [(left, NEGATED[op], right)]
        elif _removes(_constant(b)):  # where(kept, scores, -inf)
            kept, scores = index_predicate(cond, len(shape)), a
        else:
            continue
        if kept is None:
            continue
        condition = _trailing_condition(kept, len(shape))
        softmax = _only_user(node)
        if condition is None or softmax is None or packet_name(softmax) != "_softmax" \
                or softmax.args[1] % len(shape) != len(shape) - 1:
            continue
        first, second = _scores_contraction(scores), _values_contraction(softmax)
        if first is None or second is None or _shape(first)[-2:] != shape[-2:] \
                or _shape(second.args[0])[-2:] != shape[-2:]:
            continue
        found += [MaskedContraction(first.name, condition, "out"), MaskedContraction(second.name, condition, "a")]
    return found


def condition_for(kernel: Any, pk: Any, masked: MaskedContraction) -> str | None:
    """``masked.condition`` in ``kernel``'s loop variables (``pk`` its parsed form): the variables
    that index the last two dims of its output or of its left operand; None when those
    subscripts are not plain loop variables."""
    access = pk.out if masked.operand == "out" else pk.reads[0]
    subs = access.index[-2:]
    names = []
    for a in subs:
        coefs = [v for v, c in a.coefs if c]
        if len(coefs) != 1 or a.const != 0 or dict(a.coefs)[coefs[0]] != 1:
            return None
        names.append(coefs[0])
    mapping = {"row": names[0], "col": names[1]}
    return re.sub(r"\b(row|col)\b", lambda m: mapping[m.group(0)], masked.condition)


def restrict_contraction(steps: list, start: int, masked: MaskedContraction) -> bool:
    """Give the contraction kernel among ``steps[start:]`` (what lowering ``masked.node`` emitted)
    the mask's kept condition; False when there is no such kernel or its subscripts do not fit."""
    from ir_schemas import Kernel
    from solar_assets.ir import parse_kernel

    for at in range(start, len(steps)):
        step = steps[at]
        if not isinstance(step, Kernel) or step.where or step.update != "+=":
            continue
        pk = parse_kernel(step)
        if not pk.is_sum_of_products:
            continue
        condition = condition_for(step, pk, masked)
        if condition is None:
            return False
        steps[at] = step.model_copy(update={"where": condition})
        return True
    return False
