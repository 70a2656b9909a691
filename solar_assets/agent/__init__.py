"""The LLM translation agent: a langchain chat model asked for Affine Loop IR, every reply verified
(IR checker, interface, validation against the golden outputs) and retried with diagnostics.

Modules: ``config`` (which model: ``SOLAR_LLM=provider:model``), ``prompt`` (rules, schema, worked
examples from ``examples``), ``parse`` (reply -> Program), ``loop`` (generate, then verify),
``cache`` (accepted answers on disk), ``workload`` (the whole workload), ``node`` (one graph node,
for auto mode), ``modes`` (tracer | agent | auto).
"""
from solar_assets.agent.config import (
    NOT_CONFIGURED,
    AgentNotConfigured,
    AgentSettings,
    agent_configured,
    agent_settings,
    use_chat_model,
)
from solar_assets.agent.loop import AgentGaveUp, AgentResult, generate_program
from solar_assets.agent.modes import TRANSLATORS, translate
from solar_assets.agent.parse import ReplyError, parse_program
from solar_assets.agent.prompt import prompt_sha256, system_prompt
from solar_assets.agent.workload import translate_workload

__all__ = [
    "NOT_CONFIGURED", "TRANSLATORS", "AgentGaveUp", "AgentNotConfigured", "AgentResult", "AgentSettings",
    "ReplyError", "agent_configured", "agent_settings", "generate_program", "parse_program", "prompt_sha256",
    "system_prompt", "translate", "translate_workload", "use_chat_model",
]
