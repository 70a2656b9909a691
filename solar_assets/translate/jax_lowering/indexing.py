"""gather and scatter (replace, add, sub, mul, min, max) through the IR's indirect subscripts
(``X[I[n, 0] + w, c]``).

JAX's canonical form puts the index vector last in ``indices``; each operand dim named in
``start_index_map`` is addressed by ``I[batch..., j]`` plus its window position, the others by
the window position alone. The indexed tensor is read (or written) whole, so a view is copied
first; the IR requires every index in range (an error at execution), which covers the
in-bounds gathers — negative indices are already normalised by ``jnp`` before the gather, and an
out-of-range gather index under ``mode=fill`` is an execution error rather than a fill.

A scatter follows JAX's modes for an update window that does not fit in the operand:
``clip`` clamps each start index into ``[0, dim - window]``; ``fill`` / ``drop`` and
``promise_in_bounds`` (what XLA does: out-of-bounds scatters are discarded) skip the whole
window. A skipped window of an accumulating scatter adds (multiplies, ...) the update's
identity at a clamped, in-range position; a skipped window of a replacing scatter writes into
spare rows past the end of the operand's first indexed dim, which the result does not see.
"""
from __future__ import annotations

import numpy as np

from solar_assets.translate.core.affine import view_dim
from solar_assets.translate.core.gather import gather, scatter
from solar_assets.translate.jax_lowering.context import JCtx, Lin, LoweringGap, SymTensor, lins, loop_vars
from solar_assets.translate.jax_lowering.registry import lowers


def _operand_subscripts(x_rank: int, index: SymTensor, batch: list[Lin], start_index_map, window: dict[int, Lin],
                        batching: dict[int, int]) -> list[str]:
    """Subscripts of the indexed tensor: ``I[batch..., j] + window``, ``window``, or for an operand
    batching dim the batch position of its indices batching dim (``take_along_axis``)."""
    subs = []
    for d in range(x_rank):
        if d in batching:
            subs.append(batch[batching[d]].render())
            continue
        w = window.get(d, Lin())
        if d in start_index_map:
            j = list(start_index_map).index(d)
            read = index.access(batch + [Lin.constant(j)])
            subs.append(read if w == Lin() else f"{read} + {w.render()}")
        else:
            subs.append(w.render())
    return subs


@lowers("gather")
def gather_lowering(c: JCtx, x, indices, *, dimension_numbers, slice_sizes, **_):
    dn = dimension_numbers
    batching = dict(zip(getattr(dn, "operand_batching_dims", ()), getattr(dn, "start_indices_batching_dims", ())))
    out_shape = c.out_shape()
    offset_dims = list(dn.offset_dims)
    windowed = [d for d in range(len(x.shape)) if d not in dn.collapsed_slice_dims and d not in batching]

    def subscripts(idx: list[Lin]) -> list[str]:
        batch = [idx[d] for d in range(len(out_shape)) if d not in offset_dims]
        window = {d: idx[offset_dims[n]] for n, d in enumerate(windowed)}
        return _operand_subscripts(len(x.shape), indices, batch, dn.start_index_map, window, batching)

    return gather(c.b, c.name, x, c.new_output(), subscripts)


# scatter primitive -> (update, the value's template over the update's read)
SCATTERS = {"scatter": ("=", "{0}"), "scatter-add": ("+=", "{0}"), "scatter_add": ("+=", "{0}"),
            "scatter-sub": ("+=", "-{0}"), "scatter_sub": ("+=", "-{0}"), "scatter-mul": ("*=", "{0}"),
            "scatter_mul": ("*=", "{0}"), "scatter-min": ("min=", "{0}"), "scatter_min": ("min=", "{0}"),
            "scatter-max": ("max=", "{0}"), "scatter_max": ("max=", "{0}")}


def _identity(update: str, dtype: str) -> str:
    """The identity of an accumulating update in ``dtype``, as kernel text."""
    if update == "+=":
        return "0"
    if update == "*=":
        return "1"
    if dtype == "bool":
        return "0" if update == "max=" else "1"
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(np.dtype(dtype))
        return f"({info.min})" if update == "max=" else str(info.max)
    return "-inf" if update == "max=" else "inf"


def _mode(mode) -> str:
    """'clip', 'drop' (FILL_OR_DROP and PROMISE_IN_BOUNDS: XLA discards out-of-bounds scatters)."""
    name = getattr(mode, "name", str(mode)).upper()
    if name == "CLIP":
        return "clip"
    if name in ("FILL_OR_DROP", "PROMISE_IN_BOUNDS", "NONE"):
        return "drop"
    raise LoweringGap(f"a scatter with mode {name}")


def _replaces_only(update_jaxpr) -> bool:
    """Whether a ``scatter``'s combiner is the plain replacement (None, or ``lambda x, y: y``)."""
    if update_jaxpr is None:
        return True
    jaxpr = getattr(update_jaxpr, "jaxpr", update_jaxpr)
    return not jaxpr.eqns and len(jaxpr.invars) == 2 and list(jaxpr.outvars) == [jaxpr.invars[1]]


@lowers(*SCATTERS)
def scatter_lowering(c: JCtx, x, indices, updates, *, dimension_numbers, mode=None, update_jaxpr=None,
                     update_consts=(), **_):
    name = c.eqn.primitive.name
    update, template = SCATTERS[name]
    if name == "scatter" and not _replaces_only(update_jaxpr):
        raise LoweringGap("a scatter with a custom combiner (scatter_apply)")
    if not isinstance(indices, SymTensor) or not isinstance(updates, SymTensor):
        raise LoweringGap("a scatter whose indices or updates are numbers")
    x = c.tensor(x, c.out_dtype())
    dn = dimension_numbers
    batching = dict(zip(getattr(dn, "operand_batching_dims", ()), getattr(dn, "scatter_indices_batching_dims", ())))
    window_dims = list(dn.update_window_dims)
    rank = len(x.shape)
    windowed = [d for d in range(rank) if d not in dn.inserted_window_dims and d not in batching]
    size = {d: 1 for d in range(rank)}  # the update window's extent along each operand dim
    size.update({d: int(updates.shape[window_dims[n]]) for n, d in enumerate(windowed)})
    starts = list(dn.scatter_dims_to_operand_dims)
    if indices.shape[-1:] != (len(starts),):
        raise LoweringGap(f"scatter indices of shape {indices.shape} (the index vector must be the last dim)")
    batch_shape = tuple(indices.shape[:-1])
    highest = [x.shape[d] - size[d] for d in starts]  # the last start that keeps the window inside
    if any(h < 0 for h in highest):
        raise LoweringGap("a scatter whose update window is larger than the operand")
    mode = _mode(mode)
    bv = loop_vars("b", len(batch_shape))
    bidx = lins(bv)
    bloops = list(zip(bv, batch_shape))

    def index_read(j: int) -> str:
        return indices.access(bidx + [Lin.constant(j)])

    # in-range start indices: clamped (``clip``, and the in-range stand-in of a skipped window)
    fitted = c.b.declare(c.name + "_index", indices.shape, indices.dtype)
    for j, h in enumerate(highest):
        c.b.kernel(f"{c.name}_index{j}", bloops, fitted.access(bidx + [Lin.constant(j)]), "=",
                   f"min(max({index_read(j)}, 0), {h})")
    keep = None  # bool per update window: the window fits (``drop``)
    if mode == "drop" and starts:
        keep = c.b.declare(c.name + "_fits", batch_shape, "bool")
        cond = " and ".join(f"({index_read(j)} >= 0) and ({index_read(j)} <= {h})" for j, h in enumerate(highest))
        c.b.kernel(c.name + "_fits", bloops, keep.access(bidx), "=", cond or "1")

    out_shape = list(x.shape)
    if keep is not None and update == "=" and starts:
        # a skipped window is written past the end of the first indexed dim, in spare rows
        d0 = starts[0]
        out_shape[d0] += size[d0]
        spare = c.b.declare(c.name + "_spare", indices.shape, indices.dtype)
        c.b.kernel(f"{c.name}_spare0", bloops, spare.access(bidx + [Lin.constant(0)]), "=",
                   f"select({keep.access(bidx)}, {fitted.access(bidx + [Lin.constant(0)])}, {x.shape[d0]})")
        for j in range(1, len(starts)):
            c.b.kernel(f"{c.name}_spare{j}", bloops, spare.access(bidx + [Lin.constant(j)]), "=",
                       fitted.access(bidx + [Lin.constant(j)]))
        fitted, keep = spare, None
    out = c.b.declare(c.name, out_shape, c.out_dtype())
    v = loop_vars("i", rank)
    c.b.kernel(c.name + "_operand", list(zip(v, x.shape)), out.access(lins(v)), "=", x.access(lins(v)))

    def subscripts(idx: list[Lin]) -> list[str]:
        batch = [idx[d] for d in range(len(updates.shape)) if d not in window_dims]
        window = {d: idx[window_dims[n]] for n, d in enumerate(windowed)}
        return _operand_subscripts(rank, fitted, batch, starts, window, batching)

    def value(idx: list[Lin]) -> str:
        v = template.format(c.read(updates, idx, updates.shape))
        if keep is None:
            return v
        batch = [idx[d] for d in range(len(updates.shape)) if d not in window_dims]
        return f"select({keep.access(batch)}, {v}, {_identity(update, c.out_dtype())})"

    scatter(c.b, c.name + "_" + (name.split("-")[-1] if "-" in name else "update"), out, updates.shape, subscripts,
            value, update)
    if tuple(out_shape) == tuple(x.shape):
        return out
    return out.reindex(x.shape, [Lin.of(view_dim(d)) for d in range(rank)])
