"""Which chat model the agent asks, chosen by the user: ``SOLAR_LLM=provider:model``.

The provider packages are optional extras (``pip install 'solar[openai]'``); with none
configured the agent path refuses in one line and the tracer path is untouched. Tests and the
evaluation script put their own model in place with ``use_chat_model``.
"""
from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from solar_assets.errors import SolarError

log = logging.getLogger(__name__)

ENV_MODEL = "SOLAR_LLM"
ENV_MAX_ATTEMPTS = "SOLAR_LLM_MAX_ATTEMPTS"
DEFAULT_MAX_ATTEMPTS = 3
NOT_CONFIGURED = ("the agent translator needs a chat model: set SOLAR_LLM=provider:model "
                  "(e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, ollama:llama3.1) "
                  "and install the provider's extra (pip install 'solar[openai]')")


class AgentNotConfigured(SolarError):
    """No chat model is configured, or the configured one cannot be created."""


@dataclass(frozen=True)
class AgentSettings:
    """The chat model the agent asks, the name it is recorded under, and how often it may try."""

    model: Any  # a langchain BaseChatModel
    model_name: str
    max_attempts: int = DEFAULT_MAX_ATTEMPTS


_overrides: list[AgentSettings] = []  # a stack; a module global, so Dagster's in-process steps see it


@contextlib.contextmanager
def use_chat_model(model: Any, name: str | None = None, max_attempts: int | None = None) -> Iterator[AgentSettings]:
    """Within the block, the agent asks ``model`` (any langchain chat model) instead of ``SOLAR_LLM``'s."""
    settings = AgentSettings(model, name or _model_name(model), max_attempts or _max_attempts())
    _overrides.append(settings)
    try:
        yield settings
    finally:
        _overrides.remove(settings)


def agent_settings(required: bool = True) -> AgentSettings | None:
    """The configured chat model; raises ``AgentNotConfigured`` (or returns None when not
    ``required``) when there is none."""
    if _overrides:
        return _overrides[-1]
    spec = os.environ.get(ENV_MODEL, "").strip()
    if not spec:
        if required:
            raise AgentNotConfigured(NOT_CONFIGURED)
        return None
    return _settings_from_spec(spec, _max_attempts())


def agent_configured() -> bool:
    """Whether a chat model is configured (without creating it)."""
    return bool(_overrides) or bool(os.environ.get(ENV_MODEL, "").strip())


@lru_cache(maxsize=8)
def _settings_from_spec(spec: str, max_attempts: int) -> AgentSettings:
    from langchain.chat_models import init_chat_model

    try:
        model = init_chat_model(spec)
    except ImportError as e:
        raise AgentNotConfigured(f"{ENV_MODEL}={spec}: {str(e).splitlines()[0]} "
                                 "(the provider extras: pip install 'solar[openai]', 'solar[anthropic]', "
                                 "'solar[ollama]')") from None
    except Exception as e:  # an unknown provider, a missing API key: say which setting is at fault
        raise AgentNotConfigured(f"{ENV_MODEL}={spec}: cannot create the chat model: "
                                 f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    log.info("agent: chat model %s", spec)
    return AgentSettings(model, spec, max_attempts)


def _max_attempts() -> int:
    raw = os.environ.get(ENV_MAX_ATTEMPTS, "").strip()
    if not raw:
        return DEFAULT_MAX_ATTEMPTS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise AgentNotConfigured(f"{ENV_MAX_ATTEMPTS}={raw!r}: must be a positive integer")
    return value


def _model_name(model: Any) -> str:
    """``provider-ish:model`` for a model object: its ``model_name`` / ``model`` field, else its type."""
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return f"{getattr(model, '_llm_type', type(model).__name__)}:{value}"
    return getattr(model, "_llm_type", type(model).__name__)
