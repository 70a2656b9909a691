"""Evaluate the LLM translation agent on a directory of workloads: success, attempts, tokens.

    SOLAR_LLM=openai:gpt-4o python bench/agent_eval.py [PATH ...] [--max-attempts N] [--cache DIR]
    python bench/agent_eval.py --fake [--fake-flaky]        # smoke test, no model needed

Each workload is translated by the agent (``pipeline.translate_source(..., translator="agent")``)
and then validated by the pipeline at its validation size, exactly as ``solar analyze
--translator agent`` would; a workload counts as a success only when that validation passes.
Prints one line per workload (success, attempts, input / output tokens as the model reports them,
seconds, and the first line of any error) and a total line. Without ``--cache`` every run uses a
fresh cache, so it measures real model calls.

``--fake`` replaces the model by a fake langchain chat model answering with the tracer's IR of the
workload at the size the prompt asks for (``--fake-flaky``: a malformed reply first in every
conversation, to exercise the retry), so the script and the agent loop can be checked offline.
Fake replies report no token usage.
"""
from __future__ import annotations

import argparse
import contextlib
import re
import sys
import tempfile
import time
from pathlib import Path

from solar_assets import pipeline
from solar_assets.workloads import discover_workloads

REPO = Path(__file__).resolve().parents[1]


def fake_model(flaky: bool):
    """A fake chat model answering with the tracer's IR of the workload it is asked about, at the
    constants the prompt names (so validation at a scaled-down size works too); with ``flaky`` the
    first reply of every conversation is malformed JSON."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class TracerOracleChatModel(BaseChatModel):
        flaky: bool = False

        @property
        def _llm_type(self) -> str:
            return "fake-tracer-oracle"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            task = messages[1].content
            path = re.search(r"Translate this workload \(file (.+?)\)", task).group(1)
            rebound = re.search(r"constants rebound \(the shapes follow from them\): (.*?)\.\n", task)
            constants = {k: int(v) for k, v in re.findall(r"(\w+) = (\d+)", rebound.group(1))} if rebound else None
            if self.flaky and len(messages) == 2:
                text = '```json\n{"name": "truncated",\n```'
            else:
                ir = pipeline.translate_source(pipeline.read_source(path), None, constants, "tracer").program
                text = f"```json\n{ir.model_dump_json(exclude_none=True, indent=1)}\n```"
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    return TracerOracleChatModel(flaky=flaky)


def evaluate(path: Path, cache: Path) -> dict:
    """Translate with the agent and validate like ``analyze``; the row for one workload."""
    from solar_assets.errors import SolarError

    start = time.perf_counter()
    row = {"workload": path.stem, "ok": False, "attempts": 0, "input_tokens": None, "output_tokens": None,
           "error": ""}
    try:
        src = pipeline.read_source(path)
        try:
            translation = pipeline.translate_source(src, cache, translator="agent")
        except SolarError as e:
            attempts = getattr(e, "attempts", ())
            row["attempts"] = len(attempts)
            row["input_tokens"] = _total([a.input_tokens for a in attempts])
            row["output_tokens"] = _total([a.output_tokens for a in attempts])
            raise
        row["attempts"] = translation.attempts
        row["input_tokens"], row["output_tokens"] = translation.tokens()
        size = pipeline.validation_size_for(src, translation, cache)
        golden = pipeline.golden_for(src, cache, size)
        pipeline.validate_translation(src, translation, golden, cache)
        row["ok"] = True
    except SolarError as e:
        row["error"] = pipeline.one_line(str(e))
    row["seconds"] = time.perf_counter() - start
    return row


def _total(values: list) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _cell(value) -> str:
    return "-" if value is None else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(REPO / "data" / "workloads")])
    parser.add_argument("--max-attempts", type=int, default=None, help="attempts per workload (default: "
                        "$SOLAR_LLM_MAX_ATTEMPTS or 3)")
    parser.add_argument("--cache", metavar="DIR", help="cache directory (default: a fresh temporary one)")
    parser.add_argument("--fake", action="store_true", help="a fake model answering with the tracer's IR")
    parser.add_argument("--fake-flaky", action="store_true", help="with --fake: a malformed reply first")
    args = parser.parse_args(argv)

    from solar_assets.agent import agent_settings, use_chat_model

    if not args.fake:
        settings = agent_settings()  # AgentNotConfigured: one line saying what to set
        print(f"model {settings.model_name}", file=sys.stderr)
    paths = discover_workloads(*args.paths)
    width = max([len("workload"), *(len(p.stem) for p in paths)])
    print(f"{'workload':<{width}}  {'ok':>3}  {'attempts':>8}  {'in tokens':>9}  {'out tokens':>10}  {'seconds':>8}  error")
    rows = []
    with tempfile.TemporaryDirectory(prefix="solar-agent-eval-") as tmp:
        cache = Path(args.cache) if args.cache else Path(tmp)
        for path in paths:
            context = use_chat_model(fake_model(args.fake_flaky), "fake:tracer-oracle", args.max_attempts) \
                if args.fake else (use_chat_model(agent_settings().model, agent_settings().model_name,
                                                  args.max_attempts) if args.max_attempts else contextlib.nullcontext())
            with context:
                row = evaluate(path, cache)
            rows.append(row)
            print(f"{row['workload']:<{width}}  {'✓' if row['ok'] else '✗':>3}  {row['attempts']:>8}  "
                  f"{_cell(row['input_tokens']):>9}  {_cell(row['output_tokens']):>10}  {row['seconds']:>8.2f}  "
                  f"{row['error'][:160]}", flush=True)
    ok = sum(r["ok"] for r in rows)
    print(f"{'total':<{width}}  {ok}/{len(rows)}  {sum(r['attempts'] for r in rows):>7}  "
          f"{_cell(_total([r['input_tokens'] for r in rows])):>9}  "
          f"{_cell(_total([r['output_tokens'] for r in rows])):>10}  {sum(r['seconds'] for r in rows):>8.2f}")
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
