"""What a translator hands on: the IR program and where it came from."""
from __future__ import annotations

from dataclasses import dataclass, field

from ir_schemas import Program
from solar_assets.errors import SolarError


class TranslationError(SolarError):
    """A workload the translator could not turn into IR; the message names the file and the op."""


@dataclass(frozen=True)
class Translation:
    program: Program
    translator: str  # "tracer" or "agent"
    source_sha256: str
    seconds: float
    model: str | None = None  # the chat model, for the agent
    attempts: int = 1
    diagnostics: tuple[str, ...] = field(default_factory=tuple)
