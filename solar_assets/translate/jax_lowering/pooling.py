"""The gradients of max / min pooling: ``select_and_scatter_add`` and ``select_and_gather_add``.

Both pick one position in every window of ``operand``: the first (in row-major window order)
holding the window's max (``select_prim`` ge) or min (le), which is what XLA's select function
keeps when it is ``>=`` / ``<=``. In the IR that is three window kernels:

* ``m[p] max= X[p·s + r·d - pad]`` (the extreme of each window, over the operand padded with
  -inf / +inf as JAX pads it),
* ``pos[p] min= select(X[p·s + r·d - pad] == m[p], tap(r), T)``: the first tap attaining it
  (``tap(r)`` the row-major number of tap ``r``, ``T`` the number of taps: "none"),
* then ``select_and_scatter_add`` adds ``source[p]`` where ``pos[p] == tap(r)`` into a zeroed
  buffer the size of the padded operand (a scatter with an affine subscript), which the result
  views without its padding; ``select_and_gather_add`` sums ``select(pos[p] == tap(r),
  tangents[...], 0)`` over the taps (exactly one term is not zero).

A window whose values are all NaN selects nothing (JAX selects some position); ties among equal
values pick the first (``select_and_gather_add``'s packed reduction has no fixed order).
"""
from __future__ import annotations

from solar_assets.translate.core.affine import Lin, view_dim
from solar_assets.translate.core.window import window_index
from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap, SymTensor
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.translate.jax_lowering.views import window_source

# select_prim -> (the window reduction, the value the operand is padded with)
SELECTS = {"ge": ("max=", float("-inf")), "le": ("min=", float("inf"))}


def _select(select_prim) -> tuple[str, float]:
    name = getattr(select_prim, "name", str(select_prim))
    if name not in SELECTS:
        raise LoweringGap(f"a window selection by {name} (only ge and le, max and min pooling, are lowered)")
    return SELECTS[name]


def _taps(window, strides, dilation, pads_lo, out_shape):
    """Loops (outputs, then taps), the operand subscript, the output subscript and the tap number
    ``tap(r)`` (row-major over the window) as text."""
    loops, taps, x_idx, p_idx, terms = [], [], [], [], []
    stride = 1
    for d in reversed(range(len(window))):
        r = f"r{d}" if int(window[d]) > 1 else None
        if r is not None:
            terms.append(f"{r} * {stride}" if stride != 1 else r)
        stride *= int(window[d])
    for d in range(len(window)):
        p, r = f"p{d}", (f"r{d}" if int(window[d]) > 1 else None)
        loops.append((p, int(out_shape[d])))
        p_idx.append(Lin.of(p))
        if r is not None:
            taps.append((r, int(window[d])))
        x_idx.append(window_index(p, r, int(strides[d]), int(dilation[d]), int(pads_lo[d])))
    tap = " + ".join(reversed(terms)) if terms else "0"
    return loops + taps, x_idx, p_idx, tap, stride


def _selected(c: JCtx, src: SymTensor, window, strides, dilation, pads_lo, out_shape, update: str):
    """The window extremes and the first tap attaining each: ``(pos, loops, x_idx, p_idx, tap)``."""
    loops, x_idx, p_idx, tap, n_taps = _taps(window, strides, dilation, pads_lo, out_shape)
    best = c.b.declare(c.name + "_best", out_shape, src.dtype)
    c.b.kernel(c.name + "_best", loops, best.access(p_idx), update, src.access(x_idx))
    pos = c.b.declare(c.name + "_pos", out_shape, "int64")
    c.b.kernel(c.name + "_pos", loops, pos.access(p_idx), "min=",
               f"select({src.access(x_idx)} == {best.access(p_idx)}, {tap}, {n_taps})")
    return pos, loops, x_idx, p_idx, tap


@lowers("select_and_scatter_add")
def select_and_scatter_add_lowering(c: JCtx, source, operand, *, select_prim, window_dimensions, window_strides,
                                    padding, **_):
    update, pad_value = _select(select_prim)
    if not isinstance(source, SymTensor) or not isinstance(operand, SymTensor):
        raise LoweringGap("select_and_scatter_add of a number")
    if c.out_dtype() == "bool":
        raise LoweringGap("select_and_scatter_add of bools (an OR-scatter)")
    pads = [(int(lo), int(hi)) for lo, hi in padding]
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise LoweringGap("select_and_scatter_add with negative padding")
    rank = len(operand.shape)
    ones = [1] * rank
    src, pads_lo = window_source(c, operand, pad_value, pads, ones, c.name + "_in")
    pos, loops, _, p_idx, tap = _selected(c, src, window_dimensions, window_strides, ones, pads_lo, source.shape,
                                          update)
    # the scatter writes the padded operand's positions: p·s + r (no padding offset)
    full = [lo + n + hi for n, (lo, hi) in zip(operand.shape, pads)]
    grads = c.b.declare(c.name, full, c.out_dtype())
    v = [f"i{d}" for d in range(rank)]
    c.b.kernel(c.name + "_zero", list(zip(v, full)), grads.access([Lin.of(x) for x in v]), "=", "0")
    _, scatter_idx, _, _, _ = _taps(window_dimensions, window_strides, ones, [0] * rank, source.shape)
    c.b.kernel(c.name + "_scatter", loops, grads.access(scatter_idx), "+=",
               f"select({pos.access(p_idx)} == {tap}, {c.read(source, p_idx, source.shape)}, 0)", init="keep")
    if full == list(operand.shape):
        return grads
    return grads.reindex(operand.shape, [Lin.of(view_dim(d)) + Lin.constant(lo) for d, (lo, _) in enumerate(pads)])


@lowers("select_and_gather_add")
def select_and_gather_add_lowering(c: JCtx, tangents, operand, *, select_prim, window_dimensions, window_strides,
                                   padding, base_dilation=None, window_dilation=None, **_):
    """The JVP of max pooling: XLA reduces (operand, tangent) pairs padded (and base-dilated)
    with (-inf, 0) for ge, (+inf, 0) for le, so padded positions can be selected and give 0."""
    update, pad_value = _select(select_prim)
    if not isinstance(tangents, SymTensor) or not isinstance(operand, SymTensor):
        raise LoweringGap("select_and_gather_add of a number")
    rank = len(operand.shape)
    wdil = list(window_dilation or [1] * rank)
    src, pads_lo = window_source(c, operand, pad_value, padding, base_dilation, c.name + "_in")
    tsrc, tpads_lo = window_source(c, tangents, 0.0, padding, base_dilation, c.name + "_tangents")
    if tpads_lo != pads_lo:  # pragma: no cover - both come from the same padding
        raise LoweringGap("select_and_gather_add with different operand and tangent offsets")
    out_shape = c.out_shape()
    pos, loops, x_idx, p_idx, tap = _selected(c, src, window_dimensions, window_strides, wdil, pads_lo, out_shape,
                                              update)
    out = c.new_output()
    c.b.kernel(c.name, loops, out.access(p_idx), "+=",
               f"select({pos.access(p_idx)} == {tap}, {tsrc.access(x_idx)}, 0)")
    return out
