"""Cumulative scans as first-order recurrences: ``Y[..., i] = Y[..., i-1] (op) X[..., i]``.

The kernel reads its own output one step back (a pad value supplies the start), so it runs in
loop order; its FLOPs are one op per element, the cost of a real scan. The reverse form is a
reversed view on both sides.
"""
from __future__ import annotations

from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import ProgramBuilder, lins, loop_vars
from solar_assets.translate.core.context import LoweringGap
from solar_assets.translate.core.views import reversed_view

# canonical scan -> (pad value that starts the recurrence, the step over {prev} and {x})
SCANS = {
    "cumsum": (0.0, "{prev} + {x}"),
    "cumprod": (1.0, "{prev} * {x}"),
    "cummax": (float("-inf"), "max({prev}, {x})"),
    "cummin": (float("inf"), "min({prev}, {x})"),
    "cumlogsumexp": (float("-inf"), "max({prev}, {x}) + log1p(exp(-abs({prev} - {x})))"),
}


def scan(b: ProgramBuilder, hint: str, x: SymTensor, axis: int, op: str, out: SymTensor,
         reverse: bool = False) -> SymTensor:
    """The scan ``op`` of ``SCANS`` along ``axis`` of ``x`` into ``out`` (a whole new tensor)."""
    axis %= len(x.shape)
    start, step = SCANS[op]
    if out.dtype.startswith(("int", "uint", "bool")) and op in ("cummax", "cummin", "cumlogsumexp"):
        raise LoweringGap(f"{op} on {out.dtype} (the start value is a float infinity)")
    src = reversed_view(x, [axis]) if reverse else x
    b.decls[out.base].pad_value = start
    order = [d for d in range(len(x.shape)) if d != axis] + [axis]  # the scanned loop innermost
    v = loop_vars("i", len(x.shape))
    idx = lins(v)
    prev = list(idx)
    prev[axis] = idx[axis] + Lin.constant(-1)
    expr = step.format(prev=out.access(prev), x=src.access(idx))
    if op == "cumlogsumexp":  # -inf - -inf is nan: start from the first element instead
        expr = f"select({v[axis]} == 0, {src.access(idx)}, {expr})"
    b.kernel(hint, [(v[d], x.shape[d]) for d in order], out.access(idx), "=", expr)
    return reversed_view(out, [axis]) if reverse else out
