"""What a translator hands on: the IR program and where it came from.

The provenance fields beyond ``program`` / ``translator`` are what an audit asks of an LLM
translation (which model, which prompt, how many tries, what was wrong with each, what it cost);
they default to empty so the tracer's translations carry none of them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ir_schemas import Program
from solar_assets.errors import SolarError

# Translator label -> the mode that produces it again (used to re-translate at a validation size).
TRANSLATOR_MODES = {"tracer": "tracer", "agent": "agent", "tracer+agent": "auto"}


class TranslationError(SolarError):
    """A workload the translator could not turn into IR; the message names the file and the op."""


@dataclass(frozen=True)
class AttemptRecord:
    """One question to the chat model and what became of the answer."""

    task: str  # "workload", or "node <name>" for one op lowered by the agent in auto mode
    attempt: int  # 1-based, per task
    accepted: bool
    diagnostics: tuple[str, ...] = ()  # why the reply was rejected (empty when accepted)
    input_tokens: int | None = None  # from the reply's usage_metadata, where the model reports it
    output_tokens: int | None = None
    seconds: float = 0.0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AttemptRecord:
        return cls(**{**data, "diagnostics": tuple(data.get("diagnostics", ()))})


@dataclass(frozen=True)
class Translation:
    program: Program
    translator: str  # "tracer", "agent", or "tracer+agent" (auto mode, some ops by the agent)
    source_sha256: str
    seconds: float
    model: str | None = None  # the chat model, for the agent
    attempts: int = 1
    diagnostics: tuple[str, ...] = field(default_factory=tuple)
    prompt_sha256: str | None = None  # hash of the system prompt and templates the agent was given
    attempt_log: tuple[AttemptRecord, ...] = ()  # every attempt, in order
    agent_nodes: tuple[str, ...] = ()  # auto mode: the graph nodes the agent lowered
    from_cache: bool = False  # the agent's answer came from its cache: no model call was made

    @property
    def mode(self) -> str:
        """The ``--translator`` mode that gives this translation again (at another size, say)."""
        return TRANSLATOR_MODES.get(self.translator, "tracer")

    def tokens(self) -> tuple[int | None, int | None]:
        """Input and output tokens over all attempts; None where no attempt reported usage."""
        def total(values: list[int | None]) -> int | None:
            known = [v for v in values if v is not None]
            return sum(known) if known else None

        return (total([a.input_tokens for a in self.attempt_log]),
                total([a.output_tokens for a in self.attempt_log]))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["program"] = self.program.model_dump(mode="json")
        data["diagnostics"] = list(self.diagnostics)
        data["attempt_log"] = [asdict(a) | {"diagnostics": list(a.diagnostics)} for a in self.attempt_log]
        data["agent_nodes"] = list(self.agent_nodes)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Translation:
        """Read ``to_json``'s form; cache files written before the provenance fields existed load too."""
        return cls(program=Program.model_validate(data["program"]), translator=data["translator"],
                   source_sha256=data["source_sha256"], seconds=data["seconds"], model=data.get("model"),
                   attempts=data.get("attempts", 1), diagnostics=tuple(data.get("diagnostics", ())),
                   prompt_sha256=data.get("prompt_sha256"),
                   attempt_log=tuple(AttemptRecord.from_json(a) for a in data.get("attempt_log", ())),
                   agent_nodes=tuple(data.get("agent_nodes", ())), from_cache=data.get("from_cache", False))
