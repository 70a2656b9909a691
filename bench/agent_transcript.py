"""Write the agent session shown in docs/agent.md: the agent against a scripted fake chat model.

    python bench/agent_transcript.py            # rewrites the block between the markers in docs/agent.md

The fake model (langchain's ``GenericFakeChatModel``) answers ``data/workloads/gemm.py`` four times:
malformed JSON, a schema-valid but non-affine subscript, a program that runs but transposes A,
and the right program. Everything else is the real agent: the prompts it built, the diagnostics
its checks produced, the accepted IR and the provenance recorded. Nothing here is typed by hand
except the four scripted replies, which are labelled as such.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from pydantic import Field

from solar_assets import pipeline

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "agent.md"
BEGIN, END = "<!-- BEGIN GENERATED TRANSCRIPT (bench/agent_transcript.py) -->", "<!-- END GENERATED TRANSCRIPT -->"
WORKLOAD = REPO / "data" / "workloads" / "gemm.py"


class RecordingFakeChatModel(GenericFakeChatModel):
    calls: list = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def gemm_ir(expr: str) -> str:
    ir = {"name": "gemm",
          "tensors": [{"name": "a", "shape": [1024, 1024], "dtype": "float32", "role": "input", "binding": "input:0"},
                      {"name": "b", "shape": [1024, 1024], "dtype": "float32", "role": "input", "binding": "input:1"},
                      {"name": "c", "shape": [1024, 1024], "dtype": "float32", "role": "output"}],
          "inputs": ["a", "b"], "outputs": ["c"],
          "steps": [{"kind": "kernel", "name": "matmul",
                     "loops": [{"var": "m", "extent": 1024}, {"var": "n", "extent": 1024}, {"var": "k", "extent": 1024}],
                     "out": "c[m, n]", "update": "+=", "expr": expr}]}
    return json.dumps(ir)


SCRIPTED_REPLIES = [
    '```json\n{"name": "gemm", "tensors": [{"name": "a", "shape": [1024, 1024]\n```',
    "```json\n" + gemm_ir("a[m, k] * b[k, m * n]") + "\n```",
    "```json\n" + gemm_ir("a[k, m] * b[k, n]") + "\n```",
    "```json\n" + gemm_ir("a[m, k] * b[k, n]") + "\n```",
]


def fence(text: str, lang: str = "") -> str:
    return f"````{lang}\n{text.rstrip()}\n````"


def transcript() -> str:
    from solar_assets.agent import prompt_sha256, system_prompt, use_chat_model

    model = RecordingFakeChatModel(messages=iter(AIMessage(content=r) for r in SCRIPTED_REPLIES))
    with tempfile.TemporaryDirectory() as cache, use_chat_model(model, "fake:scripted", max_attempts=4):
        src = pipeline.read_source(WORKLOAD)
        t = pipeline.translate_source(src, Path(cache), translator="agent")
        size = pipeline.validation_size_for(src, t, Path(cache))
        validated = pipeline.validate_translation(src, t, pipeline.golden_for(src, Path(cache), size), Path(cache))
    rel = WORKLOAD.relative_to(REPO)
    system = system_prompt()
    out = [f"Workload `{rel}`, model `fake:scripted` (langchain `GenericFakeChatModel` with four scripted replies), "
           f"at most 4 attempts, an empty cache.", "",
           f"**System prompt** ({len(system):,} characters, prompt hash `{prompt_sha256()[:16]}…`): the IR rules, the "
           "JSON Schema of `ir_schemas.Program` and three worked examples (tracer IRs of gemm, conv2d_bias_relu, "
           "layernorm_gelu_mlp). Its first lines:", "",
           fence("\n".join(system.splitlines()[:12]) + "\n…"), "",
           "**Task** (the first human message):", "", fence(model.calls[0][1].content), ""]
    for record, call_index in zip(t.attempt_log, range(len(t.attempt_log))):
        reply = SCRIPTED_REPLIES[call_index]
        out += [f"### Attempt {record.attempt}: {'accepted' if record.accepted else 'rejected'}", "",
                "Reply (scripted):", "", fence(reply), ""]
        if record.diagnostics:
            nxt = model.calls[call_index + 1][-1].content
            out += ["The agent's next message, with the diagnostics of its checks:", "", fence(nxt), ""]
    out += ["### Accepted", "", "The IR, as `solar_assets.ir.format_program` prints it:", "", fence(str(t.program)), "",
            f"Validated by the pipeline at size `{validated.validated_size}`: max abs error "
            f"{validated.result.max_abs_error:.3g}, max rel error {validated.result.max_rel_error:.3g}.", "",
            "Provenance recorded with the translation (the `ir_translation` asset's metadata and the IR cache file):",
            "", fence(json.dumps({k: v for k, v in t.to_json().items() if k != "program"}, indent=1), "json")]
    return "\n".join(out) + "\n"


def main() -> int:
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        print(f"{DOC}: markers {BEGIN!r} / {END!r} not found", file=sys.stderr)
        return 2
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + BEGIN + "\n" + transcript() + END + tail)
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
