"""Why an op has no lowering, for the ops that are out of scope by design rather than not yet
written: the tracers append the reason to their one-line "no lowering for …" error, so a refused
file says what was refused and why (docs/op_surface.md groups them)."""
from __future__ import annotations

_DATA_SHAPED = "its result's shape depends on the input's values, and the IR's shapes are static"
_SEARCH = ("a search or count whose loop-nest form (every value against every boundary or bin) would bound "
           "more work than the algorithm does: no true lower bound")
_SAMPLER = "a random sampler with no fixed pattern shared by the golden run and the IR"
_BITS = "bit-level work: the IR has no bit operations"

REASONS: dict[str, str] = {
    # PyTorch (ATen overload packets)
    "masked_select": _DATA_SHAPED, "nonzero": _DATA_SHAPED, "argwhere": _DATA_SHAPED, "_unique2": _DATA_SHAPED,
    "unique_consecutive": _DATA_SHAPED, "unique_dim": _DATA_SHAPED, "masked_scatter": _DATA_SHAPED,
    "_local_scalar_dense": "it reads a tensor's value into a Python number (a shape or an index taken from data)",
    "bucketize": _SEARCH, "searchsorted": _SEARCH, "histogram": _SEARCH, "_histogramdd_bin_edges": _SEARCH,
    "_histogramdd_from_bin_cts": _SEARCH, "mode": _SEARCH, "segment_reduce": _SEARCH,
    "_embedding_bag_forward_only": _SEARCH, "_embedding_bag": _SEARCH, "_pdist_forward": _SEARCH,
    "multinomial": _SAMPLER, "fractional_max_pool2d": _SAMPLER, "fractional_max_pool3d": _SAMPLER,
    "hash_tensor": _BITS,
    "special_airy_ai": "no float64 kernel routine for the Airy functions yet (SciPy exports them with pointer results)",
    # JAX primitives
    "random_bits": "raw PRNG bits are uint32 bit streams (a float draw is lowered with a fixed pattern): " + _BITS,
    "threefry2x32": "PRNG key arrays hold uint32 bit streams: " + _BITS,
    "bitcast_convert_type": "reinterpreting a value's bits as another type: " + _BITS,
    "population_count": _BITS, "clz": _BITS, "shift_left": _BITS, "shift_right_logical": _BITS,
    "shift_right_arithmetic": _BITS,
}


def reason_suffix(op: str) -> str:
    """``": out of scope: <why>"`` for an op refused by design (an ATen packet name such as
    ``aten.mode.default``'s ``mode``, or a JAX primitive name), else ''."""
    name = op.removeprefix("aten.").split(".")[0]
    why = REASONS.get(name)
    return f": out of scope: {why}" if why else ""


EXPORT_REASONS = {
    "DataDependentOutputException": "a Python decision on a tensor's values (torch.equal, a bool or a float "
                                    "read in forward): torch.export follows one path and cannot choose it",
    "GuardOnDataDependentSymNode": "a Python branch on a size the values decide: torch.export follows one path "
                                   "and cannot choose it",
    "DynamicOutputShapeException": "an op whose result's shape depends on the values and that has no "
                                   "data-dependent export (its kernel decides the shape)",
}


def export_reason_suffix(error_type: str) -> str:
    """``": out of scope: <why>"`` for a ``torch.export`` failure that is a limit of tracing by design."""
    why = EXPORT_REASONS.get(error_type)
    return f": out of scope: {why}" if why else ""
