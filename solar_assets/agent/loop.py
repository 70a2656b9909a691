"""Generate, then verify: ask the chat model, check its reply, and on a rejection ask again with
the diagnostics, up to a limit.

The loop knows nothing of workloads: the caller gives the first messages and a ``verify``
function (Program -> diagnostics, empty when accepted). Every attempt is recorded with its
diagnostics and the token usage the model reports, and the whole conversation is kept so a
session can be shown as it happened.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ir_schemas import Program
from solar_assets.agent.config import AgentSettings
from solar_assets.agent.parse import MAX_REPLY_CHARS, ReplyError, parse_program, reply_text
from solar_assets.agent.prompt import repair_message
from solar_assets.translate.translation import AttemptRecord, TranslationError

log = logging.getLogger(__name__)

Verify = Callable[[Program], list[str]]
MAX_DIAGNOSTIC_CHARS = 2000  # a diagnostic quoting a huge reply is cut: it goes back into the next prompt


class AgentGaveUp(TranslationError):
    """The model's replies never passed verification within the attempt limit (or it could not be
    asked); ``attempts`` holds every attempt's record."""

    def __init__(self, message: str, attempts: Sequence[AttemptRecord] = ()):
        super().__init__(message)
        self.attempts = tuple(attempts)


@dataclass(frozen=True)
class AgentResult:
    program: Program
    attempts: tuple[AttemptRecord, ...]
    messages: tuple  # the conversation, langchain messages, the accepted reply last
    seconds: float


def generate_program(settings: AgentSettings, messages: Sequence, verify: Verify, task: str,
                     where: str) -> AgentResult:
    """Ask until a reply parses and ``verify`` finds nothing wrong, at most ``settings.max_attempts``
    times. ``task`` labels the records ("workload", "node relu"); ``where`` starts the error message
    (the file). Raises ``AgentGaveUp`` naming the file, the attempts and the last diagnostics."""
    from langchain_core.messages import AIMessage, HumanMessage

    conversation = list(messages)
    records: list[AttemptRecord] = []
    start = time.perf_counter()
    for attempt in range(1, settings.max_attempts + 1):
        t0 = time.perf_counter()
        try:
            reply = settings.model.invoke(conversation)
        except Exception as e:  # a network error, a refused request, a fake model run dry: no retry helps
            raise AgentGaveUp(f"{where}: asking the chat model {settings.model_name} failed at attempt {attempt} "
                              f"({task}): {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                              records) from e
        text = reply_text(reply.content)
        usage = getattr(reply, "usage_metadata", None) or {}
        try:
            program = parse_program(text)
            diagnostics = verify(program)
        except ReplyError as e:
            diagnostics = e.diagnostics
        except (RecursionError, MemoryError) as e:  # a reply the limits let through still only costs its attempt
            diagnostics = [f"the reply could not be checked: {type(e).__name__} while reading it "
                           f"({str(e) or 'nested too deeply or too large'}); write smaller, flatter expressions"]
        diagnostics = [_clip(d) for d in diagnostics]
        record = AttemptRecord(task=task, attempt=attempt, accepted=not diagnostics, diagnostics=tuple(diagnostics),
                               input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                               seconds=time.perf_counter() - t0)
        records.append(record)
        conversation.append(AIMessage(content=text if len(text) <= MAX_REPLY_CHARS  # echoed in the next prompt
                                      else f"{text[:MAX_REPLY_CHARS]}\n… (reply cut at {MAX_REPLY_CHARS:,} characters)"))
        if not diagnostics:
            log.info("%s: %s accepted at attempt %d", where, task, attempt)
            return AgentResult(program, tuple(records), tuple(conversation), time.perf_counter() - start)
        log.info("%s: %s attempt %d rejected: %s", where, task, attempt, diagnostics[0])
        if attempt < settings.max_attempts:
            conversation.append(HumanMessage(content=repair_message(attempt, diagnostics)))
    raise AgentGaveUp(f"{where}: the agent ({settings.model_name}) found no valid IR for the {task} in "
                      f"{settings.max_attempts} attempt{'s' if settings.max_attempts > 1 else ''}; "
                      f"last diagnostics: {records[-1].diagnostics[0]}", records)


def _clip(diagnostic: str) -> str:
    if len(diagnostic) <= MAX_DIAGNOSTIC_CHARS:
        return diagnostic
    return f"{diagnostic[:MAX_DIAGNOSTIC_CHARS]}… ({len(diagnostic) - MAX_DIAGNOSTIC_CHARS:,} more characters cut)"
