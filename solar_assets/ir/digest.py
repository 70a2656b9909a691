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
from ir_schemas.affine_loop_ir import PROGRAM_DIGEST


def program_digest(program: Program) -> str:
    """sha256 (hex) of the program as canonical JSON (sorted keys, no spaces; inf and nan spelled out).

    Computed once per program object (a Program is frozen) and kept beside its fields, left out of
    pickles: the stages ask for it per part and per cache lookup, 15 ms each for a level-3 model.
    The cache holds the field values it was computed from and is used only while every field is
    still that very object: a ``model_copy(update=...)`` (a mutant) copies the cache along with
    ``__dict__`` but has a new value in the field it changed."""
    fields = tuple(getattr(program, name) for name in type(program).model_fields)
    cached = program.__dict__.get(PROGRAM_DIGEST)
    if cached is None or any(a is not b for a, b in zip(cached[0], fields)):
        text = json.dumps(program.model_dump(), sort_keys=True, separators=(",", ":"), allow_nan=True)
        cached = (fields, hashlib.sha256(text.encode("utf-8")).hexdigest())
        program.__dict__[PROGRAM_DIGEST] = cached
    return cached[1]
