"""Golden values too big to keep as an asset value: their digest and the recipe to make them again.

A golden entry holds the inputs, the weights and the outputs (float32 and float64) at the
validation size: up to 1.2 GB for a GPT-Neo file, and KernelBench levels 1-4 pickled 46 GB of
them as ``golden_outputs`` values. Above ``stored_golden_cap()`` the stored value is a
``GoldenRecipe``: the sha256 of the arrays (the asset's data version) and the size constants. The
golden run is deterministic by construction (seeded inputs and weights, ``golden.golden``), so
``ir_validation`` makes the values again from the seed (from the golden cache where it holds
them) and checks the digest: a workload whose values come back different fails, naming both.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from solar_assets.errors import SolarError
from solar_assets.workloads.sizes import size_label

if TYPE_CHECKING:
    from solar_assets.golden.golden import Golden

CAP_ENV = "SOLAR_STORED_GOLDEN_BYTES"
DEFAULT_CAP = 32 << 20  # as the golden cache's cap (chain.stages.GOLDEN_CACHE_MAX_BYTES)


def stored_golden_cap() -> int:
    """The largest golden value kept whole as an asset value, in bytes (``SOLAR_STORED_GOLDEN_BYTES``)."""
    raw = os.environ.get(CAP_ENV, "").strip()
    try:
        return int(raw) if raw else DEFAULT_CAP
    except ValueError:
        raise SolarError(f"{CAP_ENV}={raw!r}: not a number of bytes") from None


def golden_arrays(golden: Golden) -> list[np.ndarray]:
    """What the digest covers: inputs, outputs and float64 outputs (the weights follow from the seed)."""
    return [*golden.inputs, *golden.outputs, *(golden.outputs64 or [])]


def golden_digest(golden: Golden) -> str:
    """16 hex digits of the arrays' bytes: the ``golden_outputs`` data version."""
    h = hashlib.sha256()
    for a in golden_arrays(golden):  # the bytes as they lie, without a copy of each array
        h.update(np.ascontiguousarray(a).reshape(-1).view(np.uint8))
    return h.hexdigest()[:16]


def golden_nbytes(golden: Golden) -> int:
    """Bytes the value would take: inputs, weights, outputs (both precisions)."""
    arrays = [*golden.inputs, *golden.params.values(), *golden.outputs, *(golden.outputs64 or [])]
    return sum(int(getattr(a, "nbytes", 0)) for a in arrays)


@dataclass(frozen=True)
class GoldenRecipe:
    """A golden value kept as its digest and what makes it again: the workload's seeded run at
    ``constants`` ({} = full size)."""

    digest: str
    constants: dict[str, int] = field(default_factory=dict)
    nbytes: int = 0

    @property
    def size_label(self) -> str:
        return size_label(self.constants)


def stored_golden(golden: Golden, cap: int | None = None) -> Golden | GoldenRecipe:
    """``golden`` itself within ``cap`` (default ``stored_golden_cap()``), else its recipe."""
    nbytes = golden_nbytes(golden)
    if nbytes <= (stored_golden_cap() if cap is None else cap):
        return golden
    return GoldenRecipe(golden_digest(golden), dict(golden.constants), nbytes)


def check_remade(golden: Golden, recipe: GoldenRecipe, source: str) -> Golden:
    """``golden`` (made again from ``recipe``) when its digest is the recorded one; else the error."""
    digest = golden_digest(golden)
    if digest != recipe.digest:
        raise SolarError(f"{source}: the golden outputs made again from the seed (digest {digest}) differ from the "
                         f"recorded ones (digest {recipe.digest}): the workload is not deterministic, or what it "
                         "reads changed; materialise golden_outputs again")
    return golden
