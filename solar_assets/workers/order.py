"""Which file a worker takes next: the longest first.

With a few workers and many files, the wall time of a call is set by the files that start last:
in path order KernelBench's level-4 models (minutes each, a Hugging Face model built and checked
node-wise at full size) start after two hundred small problems, and one worker then runs alone
for ten minutes. Longest-processing-time-first is the classic remedy (Graham's 4/3 bound).

The estimate of a file's cost is what the last call that computed it took (a small JSON in the
home's cache dir, keyed by resolved path), else a guess from its source: a file importing a library beyond
the frameworks (``transformers``: a whole pretrained architecture) before the rest, larger
sources before smaller ones. A wrong guess costs only balance: results keep the call's order.
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
# a guess for a file importing a model library, against 1 s per 10 kB of source for the rest
_LIBRARY_GUESS_S = 60.0
_SOURCE_BYTES_PER_S = 10_000.0


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


def estimate_seconds(path: str | Path, durations: Mapping[str, float]) -> float:
    """The seconds a file is expected to take: recorded, else guessed from its source."""
    recorded = durations.get(_resolved(path))
    if recorded is not None:
        return recorded
    try:
        source = Path(path).read_text(errors="replace")
    except OSError:
        return 0.0  # it fails fast in its worker
    guess = len(source.encode()) / _SOURCE_BYTES_PER_S
    return guess + (_LIBRARY_GUESS_S if _imports_library(source) else 0.0)


def longest_first(paths: Sequence[str | Path], durations: Mapping[str, float]) -> list[int]:
    """Indices of ``paths`` by decreasing estimated cost (ties: the call's order)."""
    estimates = [estimate_seconds(p, durations) for p in paths]
    return sorted(range(len(paths)), key=lambda i: -estimates[i])
