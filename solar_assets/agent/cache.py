"""Accepted agent answers on disk, keyed by (what was asked, model, prompt hash): a re-run asks
the model nothing.

"What was asked" is the source's hash (with the local modules it imports) plus the rebound constants for a whole workload, and the
node's description (op, argument, input and output declarations) for one node. Only accepted
programs are stored, with the attempts that led to them, so the provenance survives a cache hit.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from ir_schemas import Program
from solar_assets import cache_store
from solar_assets.translate.translation import AttemptRecord

log = logging.getLogger(__name__)


def source_key(src: Any) -> str:
    """What an answer depends on of the workload: its file and the local modules it imports (a
    helper's edit asks the model again), as the other caches key it (``WorkloadSource.local_sha256``)."""
    local = getattr(src, "dependencies_sha256", getattr(src, "local_sha256", ""))
    return f"{src.sha256}:{local}" if local else src.sha256


def cache_key(**parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class AgentCache:
    """``<cache_dir>/agent/<label>-<key>.json``; ``cache_dir=None`` stores nothing."""

    def __init__(self, cache_dir: str | Path | None):
        self.dir = Path(cache_dir) / "agent" if cache_dir is not None else None

    def _path(self, label: str, key: str) -> Path | None:
        safe = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in label)[:60]
        return self.dir / f"{safe}-{key[:20]}.json" if self.dir is not None else None

    def load(self, label: str, key: str) -> tuple[Program, tuple[AttemptRecord, ...], float] | None:
        """The accepted answer for ``key``, or None (none stored, another key's, or an entry that
        fails its digest or does not parse: ``cache_store`` deletes it with a warning)."""
        path = self._path(label, key)

        def decode(data: dict[str, Any]) -> tuple[Program, tuple[AttemptRecord, ...], float] | None:
            if data.get("key") != key:
                return None
            return (Program.model_validate(data["program"]),
                    tuple(AttemptRecord.from_json(a) for a in data["attempts"]), float(data["seconds"]))

        hit = cache_store.load_json(path, decode)
        if hit is not None:
            log.debug("agent answer from cache %s", path)
        return hit

    def store(self, label: str, key: str, program: Program, attempts: tuple[AttemptRecord, ...],
              seconds: float, about: dict[str, Any]) -> None:
        cache_store.store(self._path(label, key), json.dumps({
            "key": key, **about, "seconds": seconds, "program": program.model_dump(mode="json"),
            "attempts": [{**a.__dict__, "diagnostics": list(a.diagnostics)} for a in attempts],
        }, indent=1))
