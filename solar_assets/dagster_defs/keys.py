"""Workload partition keys, computed without importing Dagster.

``solar analyze`` decides which files need a worker (``call_records``) before Dagster is imported,
and that decision is per workload partition, so the key of a file must be available to the CLI's
main thread without Dagster's import (~0.6 s). ``partitions`` re-exports these functions.
"""
from __future__ import annotations

import hashlib
import unicodedata
from pathlib import Path

_KEY_RESERVED = set("|,[]%")  # Dagster's multi-partition separator and range syntax, and the escape


def escape_key(text: str) -> str:
    """``text`` as a valid Dagster partition key: reserved and control characters as ``%XX``
    (UTF-8 bytes), and a dot that would make ``...`` likewise; everything else kept."""
    out: list[str] = []
    for char in text:
        if char in _KEY_RESERVED or unicodedata.category(char).startswith("C") or \
                (char == "." and len(out) >= 1 and out[-1] == "."):
            out.append("".join(f"%{b:02X}" for b in char.encode("utf-8")))
        else:
            out.append(char)
    return "".join(out)


def workload_key(path: str | Path, workload_dir: str | Path) -> str:
    """The partition key of a workload file: its escaped stem when it lies directly in
    ``workload_dir``, else ``<escaped stem>@<8 hex digits of its resolved path>``."""
    path = Path(path)
    resolved = path.resolve()
    if resolved.parent == Path(workload_dir).resolve():
        return escape_key(path.stem)
    return f"{escape_key(path.stem)}@{hashlib.sha256(str(resolved).encode()).hexdigest()[:8]}"
