"""gather and scatter-add through the IR's indirect subscripts (``X[I[n, 0] + w, c]``).

JAX's canonical form puts the index vector last in ``indices``; each operand dim named in
``start_index_map`` is addressed by ``I[batch..., j]`` plus its window position, the others by
the window position alone. The indexed tensor is read (or written) whole, so a view is copied
first; the IR requires every index in range (an error at execution), which covers the
in-bounds uses — negative indices are already normalised by ``jnp`` before the gather, and an
out-of-range index under ``mode=fill`` / ``drop`` is an execution error rather than a fill.
"""
from __future__ import annotations

from solar_assets.translate.core.gather import gather, scatter
from solar_assets.translate.jax_lowering.context import JCtx, Lin, SymTensor
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


@lowers("scatter-add", "scatter_add")
def scatter_add_lowering(c: JCtx, x, indices, updates, *, dimension_numbers, **_):
    dn = dimension_numbers
    batching = dict(zip(getattr(dn, "operand_batching_dims", ()), getattr(dn, "scatter_indices_batching_dims", ())))
    out = c.elementwise("{0}", x)  # the operand's values, then the updates added in place
    window_dims = list(dn.update_window_dims)
    windowed = [d for d in range(len(out.shape)) if d not in dn.inserted_window_dims and d not in batching]

    def subscripts(idx: list[Lin]) -> list[str]:
        batch = [idx[d] for d in range(len(updates.shape)) if d not in window_dims]
        window = {d: idx[window_dims[n]] for n, d in enumerate(windowed)}
        return _operand_subscripts(len(out.shape), indices, batch, dn.scatter_dims_to_operand_dims, window, batching)

    return scatter(c.b, c.name + "_add", out, updates.shape, subscripts,
                   lambda idx: c.read(updates, idx, updates.shape), "+=")
