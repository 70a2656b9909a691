"""``sort`` and ``top_k`` as the IR's TopK step (the one non-affine selection step).

``top_k`` is a TopK (largest, sorted, ties keep the lower index first, as JAX does). A ``sort``
with one key is a TopK of the key with ``k`` the axis extent and ``largest=False`` (a stable
ascending sort; NaN sorts last in both). The other operands of a multi-operand sort (the
``argsort`` iota, a payload sorted along with the key) are gathered with the TopK's indices
through an indirect subscript: ``O[i0, i1] = Y[i0, I[i0, i1]]``. More than one key is not
lowered.
"""
from __future__ import annotations

from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap, SymTensor, is_const, lins, loop_vars
from solar_assets.translate.jax_lowering.registry import lowers


def _tensor(c: JCtx, x, i: int) -> SymTensor:
    if is_const(x) or not isinstance(x, SymTensor):
        raise LoweringGap("a sort or top_k of a number")
    return x


def _cast(c: JCtx, x: SymTensor, i: int) -> SymTensor:
    """Output ``i`` as its own tensor in its JAX dtype (the TopK's indices are int64)."""
    out = c.new_output(i, f"{c.name}_out{i}")
    v = loop_vars("i", len(x.shape))
    c.b.kernel(f"{c.name}_out{i}", list(zip(v, x.shape)), out.access(lins(v)), "=", x.access(lins(v)))
    return out


@lowers("top_k")
def top_k_lowering(c: JCtx, x, *_, k: int, axis: int = -1, **__):
    x = _tensor(c, x, 0)
    axis = axis % len(x.shape)
    values, indices = c.b.topk(c.name, x, axis, int(k), True)
    return [values, _cast(c, indices, 1)]


@lowers("sort")
def sort_lowering(c: JCtx, *operands, dimension: int, num_keys: int = 1, **_):
    if num_keys != 1:
        raise LoweringGap(f"a sort with {num_keys} keys (only one key is lowered)")
    key = _tensor(c, operands[0], 0)
    axis = dimension % len(key.shape)
    values, indices = c.b.topk(c.name, key, axis, key.shape[axis], False)
    outs = [values]
    v = loop_vars("i", len(key.shape))
    for j, y in enumerate(operands[1:], start=1):
        y = c.b.materialize(_tensor(c, y, j), f"{c.name}_operand{j}")
        subs = [f"{indices.base}[{', '.join(v)}]" if d == axis else var for d, var in enumerate(v)]
        out = c.new_output(j, f"{c.name}_out{j}")
        c.b.kernel(f"{c.name}_gather{j}", list(zip(v, key.shape)), out.access(lins(v)), "=",
                   f"{y.base}[{', '.join(subs)}]")
        outs.append(out)
    return outs


@lowers("approx_top_k")
def approx_top_k_lowering(c: JCtx, x, *, k: int, reduction_dimension: int = -1, is_max_k: bool = True,
                          aggregate_to_topk: bool = True, **_):
    """``lax.approx_max_k`` / ``approx_min_k``: on the CPU, and as the least work any unit does for
    it, the exact top k (the approximation only lets a TPU skip work it does not need to)."""
    if not aggregate_to_topk:
        raise LoweringGap("approx_top_k without aggregate_to_topk (the un-aggregated candidates)")
    x = _tensor(c, x, 0)
    axis = reduction_dimension % len(x.shape)
    values, indices = c.b.topk(c.name, x, axis, int(k), bool(is_max_k))
    return [values, _cast(c, indices, 1)]
