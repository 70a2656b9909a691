"""JAX's primitive harnesses (``jax._src.internal_test_util.test_harnesses``) as workload files.

A harness is a primitive with fixed static parameters, a function of its dynamic arguments and an
argument maker that draws them in the primitive's own domain. Each chosen harness becomes one file
with ``get_inputs()`` (the harness's argument maker on a fixed ``RandomState``) and ``forward(*args)``
(the harness's function), found again by its unique full name, so the file follows the installed jax.
"""
from __future__ import annotations

import logging
import re
from collections import defaultdict
from pathlib import Path

from solar_assets.coverage.op_surface.torch_ops import OpFile

log = logging.getLogger(__name__)

PER_GROUP = 3
"""Harnesses taken from each primitive group (the first ones that run on CPU in float32)."""


def harness_source(fullname: str, group: str) -> str:
    return (
        f'"""JAX primitive harness `{fullname}` (group `{group}`), its own arguments at seed 0."""\n'
        "import numpy as np\n"
        "from jax._src.internal_test_util import test_harnesses\n\n"
        f"HARNESS = next(h for h in test_harnesses.all_harnesses if h.fullname == {fullname!r})\n\n\n"
        "def get_inputs():\n"
        "    return list(HARNESS.dyn_args_maker(np.random.RandomState(0)))\n\n\n"
        "def forward(*args):\n"
        "    return HARNESS.dyn_fun(*args)\n"
    )


def write_jax_files(directory: Path, per_group: int = PER_GROUP, only: set[str] | None = None) -> list[OpFile]:
    """Up to ``per_group`` float32 CPU harnesses of each primitive group, one file each, under ``directory``."""
    import numpy as np
    from jax._src.internal_test_util import test_harnesses

    directory.mkdir(parents=True, exist_ok=True)
    taken: dict[str, int] = defaultdict(int)
    written: list[OpFile] = []
    seen: set[str] = set()
    for h in test_harnesses.all_harnesses:
        if np.dtype(h.dtype) != np.float32:
            continue
        if only is not None and h.group_name not in only and h.fullname not in only:
            continue
        if taken[h.group_name] >= per_group:
            continue
        if not h.filter("cpu"):
            written.append(OpFile(h.fullname, None, "not implemented by jax on CPU"))
            continue
        taken[h.group_name] += 1
        stem = "jax_" + re.sub(r"[^0-9A-Za-z]+", "_", h.fullname).strip("_")[:120]
        while stem in seen:  # names cut to 120 characters can meet
            stem += "_"
        seen.add(stem)
        path = directory / f"{stem}.py"
        path.write_text(harness_source(h.fullname, h.group_name))
        written.append(OpFile(h.fullname, path))
    log.info("%d JAX harness files under %s", sum(f.path is not None for f in written), directory)
    return written
