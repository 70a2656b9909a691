"""The three ``--translator`` modes as one function: tracer, agent, auto.

``auto`` runs the tracer with the agent as its fallback for single nodes it cannot lower, and
hands the agent the whole workload only when the tracer fails elsewhere (torch.export itself,
an unsupported graph input or output). Without a configured model, ``auto`` is the tracer and
its failures say that the agent was not asked.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from solar_assets.agent.config import NOT_CONFIGURED, agent_settings
from solar_assets.agent.loop import AgentGaveUp
from solar_assets.agent.node import NodeFallback
from solar_assets.agent.prompt import prompt_sha256
from solar_assets.agent.workload import flat_diagnostics, translate_workload
from solar_assets.translate.translation import Translation, TranslationError
from solar_assets.workloads import WorkloadSource

log = logging.getLogger(__name__)

TRANSLATORS = ("tracer", "agent", "auto")


def translate(src: WorkloadSource, mode: str = "tracer", constants: Mapping[str, int] | None = None,
              cache_dir: str | Path | None = None, golden: Callable[[], Any] | None = None) -> Translation:
    """The workload's IR by ``mode``. ``golden`` gives the golden outputs at this size (for the
    agent's own validation of each reply); ``cache_dir`` holds the agent's accepted answers."""
    if mode not in TRANSLATORS:
        raise TranslationError(f"unknown translator {mode!r}; choose one of {', '.join(TRANSLATORS)}")
    constants = dict(constants or {})
    if mode == "tracer":
        return _trace(src, constants, None)
    if mode == "agent":
        return translate_workload(src, constants, cache_dir, golden)
    settings = agent_settings(required=False)
    fallback = NodeFallback(src, settings, cache_dir) if settings is not None else None
    try:
        traced = _trace(src, constants, fallback)
    except AgentGaveUp:
        raise
    except TranslationError as e:
        if settings is None:
            raise TranslationError(f"{e}; the agent was not asked: {NOT_CONFIGURED}") from None
        log.info("%s: the tracer failed (%s); asking the agent for the whole workload", src.path, e)
        translation = translate_workload(src, constants, cache_dir, golden, settings)
        note = (f"tracer: {str(e).splitlines()[0]}",)
        return dataclasses.replace(translation, diagnostics=note + translation.diagnostics)
    if fallback is None or not fallback.nodes:
        return traced
    return dataclasses.replace(
        traced, translator="tracer+agent", model=settings.model_name, attempts=len(fallback.attempts),
        diagnostics=flat_diagnostics(tuple(fallback.attempts)), prompt_sha256=prompt_sha256(),
        attempt_log=tuple(fallback.attempts), agent_nodes=tuple(fallback.nodes), from_cache=fallback.all_cached)


def _trace(src: WorkloadSource, constants: dict[str, int], fallback: NodeFallback | None) -> Translation:
    """The deterministic tracer of the workload's framework (node fallbacks: PyTorch only)."""
    if src.framework == "jax":
        from solar_assets.translate.jax_tracer import trace_jax

        return trace_jax(src, constants or None)
    from solar_assets.translate import trace_torch

    return trace_torch(src, constants or None, fallback=fallback)
