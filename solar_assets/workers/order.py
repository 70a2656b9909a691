"""Which file a worker takes next: the longest first.

With a few workers and many files, the wall time of a call is set by the files that start last:
in path order KernelBench's level-4 models (minutes each, a Hugging Face model built and checked
node-wise at full size) start after two hundred small problems, and one worker then runs alone
for ten minutes. Longest-processing-time-first is the classic remedy (Graham's 4/3 bound).

The estimate of a file's cost is what the last call that computed it took (a small JSON in the
home's cache dir, keyed by resolved path), else a guess from its source: a file importing a library beyond
the frameworks (``transformers``: a whole pretrained architecture) before the rest, larger
sources before smaller ones. A wrong guess costs only balance: results keep the call's order.
The same estimates weigh the files in the command's ETA (``cli.Progress``).
"""
from __future__ import annotations

import ast
import logging
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from solar_assets import cache_store

log = logging.getLogger(__name__)

DURATIONS_FILE = "file_seconds.json"

# modules whose import says nothing about a workload's size: the frameworks and their numerics
_FRAMEWORKS = frozenset({"torch", "jax", "jaxlib", "flax", "optax", "numpy", "scipy", "einops", "solar_assets"})
# The guess for a file no call has timed: a fixed cost, ~4 s per kB of source up to 32 kB, and
# 40 s more for one importing a model library. Fitted to a cold KernelBench run on the 2-core
# machine (2026-12-07, two workers; the seconds each file took): level 1 and 2 (~1 kB) took a
# median 2.9 and 5.1 s, level 3 (up to 23 kB of source: SwinV2 93 s, SwinMLP 71 s) 11.5 s, level 4
# (a Hugging Face model in 0.7 kB) 33 s. Only the files' ratios matter (the order, the ETA).
_FIXED_GUESS_S = 1.0
_LIBRARY_GUESS_S = 40.0
_SOURCE_BYTES_PER_S = 250.0
_SOURCE_BYTES_COUNTED = 32_000  # a file holding a large literal (a table, a test vector) is not a large model


def _resolved(path: str | Path) -> str:
    return os.path.realpath(path)


def load_durations(cache_dir: str | Path | None) -> dict[str, float]:
    """``resolved path -> seconds`` of the files earlier calls computed (empty without a cache)."""
    if cache_dir is None:
        return {}
    found = cache_store.load_json(Path(cache_dir) / DURATIONS_FILE, discard_level=logging.DEBUG)
    if not isinstance(found, dict):
        return {}
    return {str(k): float(v) for k, v in found.items() if isinstance(v, (int, float))}


def save_durations(cache_dir: str | Path | None, seconds: Mapping[str, float]) -> None:
    """Add ``path -> seconds`` of this call's files to the cache's record (a later call's order)."""
    if cache_dir is None or not seconds:
        return
    merged = {**load_durations(cache_dir), **{_resolved(p): round(float(s), 3) for p, s in seconds.items()}}
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    cache_store.store_json(Path(cache_dir) / DURATIONS_FILE, merged)


def _imports_library(source: str) -> bool:
    """Whether the source imports a top-level module outside the stdlib and the frameworks."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    stdlib = sys.stdlib_module_names
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names: Iterable[str] = (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = (node.module,)
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top not in stdlib and top not in _FRAMEWORKS:
                return True
    return False


def _estimate(path: str | Path, durations: Mapping[str, float]) -> tuple[float, bool]:
    """The expected seconds, and whether the file is an untimed one importing a model library."""
    recorded = durations.get(_resolved(path))
    if recorded is not None:
        return recorded, False
    try:
        source = Path(path).read_text(errors="replace")
    except OSError:
        return 0.0, False  # it fails fast in its worker
    guess = _FIXED_GUESS_S + min(len(source.encode()), _SOURCE_BYTES_COUNTED) / _SOURCE_BYTES_PER_S
    library = _imports_library(source)
    return guess + (_LIBRARY_GUESS_S if library else 0.0), library


def estimate_seconds(path: str | Path, durations: Mapping[str, float]) -> float:
    """The seconds a file is expected to take: recorded, else guessed from its source."""
    return _estimate(path, durations)[0]


def longest_first(paths: Sequence[str | Path], durations: Mapping[str, float]) -> list[int]:
    """Indices of ``paths`` by decreasing estimated cost (ties: the call's order), the untimed files
    importing a model library before all, as before the guess was refitted: each then starts in a
    worker that has run little else. (Ordered by the refitted guess alone, the two Swin files went
    first, and a cold KernelBench run's largest process peaked at 5.82 GB, against 5.33 GB with the
    library files first; which file's heap stacked on which was not traced.)"""
    estimates = [_estimate(p, durations) for p in paths]
    return sorted(range(len(paths)), key=lambda i: (not estimates[i][1], -estimates[i][0]))
