"""The one content digest of an IR program: what caches and Dagster data versions key on.

sha256 of the program as canonical JSON: keys sorted, no spaces, ``inf`` and ``nan`` spelled out
(pydantic's own JSON writes them as ``null``, so two programs that differ only in an infinite pad
value would hash alike). The graph's data version (``EinsumGraph.digest``) and the validation
verdict cache (``validate.verdict_cache``) both use it.
"""
from __future__ import annotations

import hashlib
import json

from ir_schemas import Program


def program_digest(program: Program) -> str:
    """sha256 (hex) of the program as canonical JSON (sorted keys, no spaces; inf and nan spelled out)."""
    text = json.dumps(program.model_dump(), sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
