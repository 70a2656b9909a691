"""The LLM translation agent against langchain's fake chat models: every reply is data, checked,
validated and retried with diagnostics; accepted answers are cached; auto mode hands the agent
only the node the tracer cannot lower."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from pydantic import Field

from workload_texts import TINY_LINEAR_RELU
from solar_assets import cli, pipeline
from solar_assets.agent import (
    NOT_CONFIGURED,
    AgentGaveUp,
    AgentNotConfigured,
    ReplyError,
    agent_settings,
    parse_program,
    prompt_sha256,
    translate_workload,
    use_chat_model,
)
from solar_assets.agent.examples import generate_examples, load_examples
from solar_assets.workloads import read_workload_source

TINY = TINY_LINEAR_RELU

TINY_IR = {
    "name": "tiny_mlp",
    "tensors": [
        {"name": "p_fc_weight", "shape": [16, 32], "dtype": "float32", "role": "weight", "binding": "param:fc.weight"},
        {"name": "p_fc_bias", "shape": [16], "dtype": "float32", "role": "weight", "binding": "param:fc.bias"},
        {"name": "x", "shape": [8, 32], "dtype": "float32", "role": "input", "binding": "input:0"},
        {"name": "y", "shape": [8, 16], "dtype": "float32", "role": "intermediate"},
        {"name": "out", "shape": [8, 16], "dtype": "float32", "role": "output"},
    ],
    "inputs": ["x"],
    "outputs": ["out"],
    "steps": [
        {"kind": "kernel", "name": "bias", "loops": [{"var": "m", "extent": 8}, {"var": "n", "extent": 16}],
         "out": "y[m, n]", "update": "=", "expr": "p_fc_bias[n]"},
        {"kind": "kernel", "name": "fc", "loops": [{"var": "m", "extent": 8}, {"var": "n", "extent": 16},
                                                    {"var": "k", "extent": 32}],
         "out": "y[m, n]", "update": "+=", "expr": "x[m, k] * p_fc_weight[n, k]", "init": "keep"},
        {"kind": "kernel", "name": "relu", "loops": [{"var": "m", "extent": 8}, {"var": "n", "extent": 16}],
         "out": "out[m, n]", "update": "=", "expr": "max(y[m, n], 0.0)"},
    ],
}


def ir_reply(ir: dict, fenced: bool = True, tokens: tuple[int, int] | None = (1200, 300)) -> AIMessage:
    text = json.dumps(ir, indent=1)
    content = f"Here is the program.\n```json\n{text}\n```\n" if fenced else text
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1], "total_tokens": sum(tokens)} if tokens else None
    return AIMessage(content=content, usage_metadata=usage)


def with_expr(ir: dict, step: str, expr: str) -> dict:
    out = json.loads(json.dumps(ir))
    next(s for s in out["steps"] if s["name"] == step)["expr"] = expr
    return out


class RecordingFakeChatModel(GenericFakeChatModel):
    """GenericFakeChatModel that keeps every list of messages it is asked with."""

    calls: list = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def fake(*replies) -> RecordingFakeChatModel:
    return RecordingFakeChatModel(messages=iter(replies))


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "workloads" / "tiny_mlp.py"
    path.parent.mkdir()
    path.write_text(TINY)
    return path


@pytest.fixture(autouse=True)
def no_configured_model(monkeypatch):
    monkeypatch.delenv("SOLAR_LLM", raising=False)
    monkeypatch.delenv("SOLAR_TRANSLATOR", raising=False)


def translate(path: Path, cache: Path):
    return pipeline.translate_source(pipeline.read_source(path), cache, translator="agent")


# ---------------------------------------------------------------------------- the loop
def test_right_first_time(tiny, tmp_path):
    model = fake(ir_reply(TINY_IR))
    with use_chat_model(model, "fake:tiny"):
        t = translate(tiny, tmp_path / "cache")
    assert (t.translator, t.model, t.attempts, t.diagnostics) == ("agent", "fake:tiny", 1, ())
    assert t.program.outputs == ("out",) and len(t.program.steps) == 3
    assert t.prompt_sha256 == prompt_sha256()
    assert t.tokens() == (1200, 300)
    assert [a.accepted for a in t.attempt_log] == [True]
    # the first prompt: the IR schema, worked examples from the tracer, the workload source
    system, task = model.calls[0][0].content, model.calls[0][1].content
    assert '"title": "Program"' in system and "Example 1: workload gemm" in system
    assert "torch.relu(self.fc(x))" in task and "param:fc.weight: float32[16, 32]" in task


def test_wrong_then_right_puts_the_diagnostics_in_the_second_prompt(tiny, tmp_path):
    wrong = with_expr(TINY_IR, "relu", "y[m, n]")  # forgot the ReLU: validates but mismatches
    model = fake(ir_reply(wrong), ir_reply(TINY_IR))
    with use_chat_model(model, "fake:tiny"):
        t = translate(tiny, tmp_path / "cache")
    assert t.attempts == 2 and [a.accepted for a in t.attempt_log] == [False, True]
    first = t.attempt_log[0].diagnostics
    assert any("validation:" in d and "'out'" in d and "max abs error" in d and "shape (8, 16)" in d for d in first)
    second_prompt = model.calls[1]
    assert second_prompt[-2].content.count('"expr": "y[m, n]"') == 1  # its own rejected reply, then
    assert "rejected" in second_prompt[-1].content and first[0] in second_prompt[-1].content
    assert t.diagnostics and t.diagnostics[0].startswith("workload, attempt 1: validation:")
    assert t.tokens() == (2400, 600)


def test_malformed_json_is_fed_back(tiny, tmp_path):
    model = fake(AIMessage(content='```json\n{"name": "tiny_mlp", "tensors": [\n```'), ir_reply(TINY_IR, fenced=False))
    with use_chat_model(model, "fake:tiny"):
        t = translate(tiny, tmp_path / "cache")
    assert t.attempts == 2
    assert "not valid JSON" in t.attempt_log[0].diagnostics[0]
    assert "not valid JSON" in model.calls[1][-1].content


def test_schema_valid_but_not_affine_is_fed_back(tiny, tmp_path):
    bad = with_expr(TINY_IR, "relu", "max(y[m * n, n], 0.0)")
    model = fake(ir_reply(bad), ir_reply(TINY_IR))
    with use_chat_model(model, "fake:tiny"):
        t = translate(tiny, tmp_path / "cache")
    diag = t.attempt_log[0].diagnostics[0]
    assert diag.startswith("IR check:") and "not affine" in diag
    assert "not affine" in model.calls[1][-1].content


def test_schema_errors_name_the_field():
    with pytest.raises(ReplyError) as e:
        parse_program(json.dumps({**TINY_IR, "steps": [{**TINY_IR["steps"][0], "update": "=="}]}))
    assert any("steps.0.kernel.update" in d for d in e.value.diagnostics)
    with pytest.raises(ReplyError, match="no JSON object"):
        parse_program("I cannot do that.")


def test_never_converging_fails_clearly_while_other_workloads_complete(tiny, tmp_path):
    (tiny.parent / "a_stubborn.py").write_text(TINY)  # sorted first: it gets the bad replies
    bad = with_expr(TINY_IR, "relu", "y[m, n] * 2.0")
    model = fake(ir_reply(bad), ir_reply(bad), ir_reply(bad), ir_reply(TINY_IR))
    with use_chat_model(model, "fake:tiny", max_attempts=3):
        results = pipeline.analyze_workloads([tiny.parent], ["H100_SXM"], cache_dir=tmp_path / "cache",
                                             translator="agent", cache_aware=False)
    assert [r.workload for r in results] == ["a_stubborn", "tiny_mlp"]
    stubborn, good = results
    assert not stubborn.ok and stubborn.failed_stage == "trace"
    assert "a_stubborn.py" in stubborn.error and "found no valid IR for the workload in 3 attempts" in stubborn.error
    assert "\n" not in stubborn.error
    assert good.ok, good.error
    assert good.rows[0].translator == "agent" and good.rows[0].macs == 8 * 32 * 16
    assert len(model.calls) == 4


def test_a_model_that_cannot_be_asked_gives_up_at_once(tiny, tmp_path):
    model = fake()  # runs dry: StopIteration on the first call
    with use_chat_model(model, "fake:dry"), pytest.raises(AgentGaveUp, match="asking the chat model fake:dry failed"):
        translate(tiny, tmp_path / "cache")


# ---------------------------------------------------------------------------- cache
def test_accepted_translation_is_cached_and_a_rerun_makes_no_call(tiny, tmp_path):
    cache = tmp_path / "cache"
    first = fake(ir_reply(with_expr(TINY_IR, "relu", "y[m, n]")), ir_reply(TINY_IR))
    with use_chat_model(first, "fake:tiny"):
        t1 = translate(tiny, cache)
    again = fake()  # any call would raise
    with use_chat_model(again, "fake:tiny"):
        t2 = translate(tiny, cache)  # the pipeline's IR cache
        t3 = translate_workload(read_workload_source(tiny), cache_dir=cache)  # the agent's own cache
    assert again.calls == []
    assert t2.from_cache and t3.from_cache and not t1.from_cache
    for t in (t2, t3):
        assert (t.program, t.attempts, t.model, t.prompt_sha256) == (t1.program, 2, "fake:tiny", t1.prompt_sha256)
        assert t.attempt_log == t1.attempt_log
    other = fake(ir_reply(TINY_IR))  # another model is another key
    with use_chat_model(other, "fake:other"):
        translate(tiny, cache)
    assert len(other.calls) == 1


# ---------------------------------------------------------------------------- auto mode
RELU_NODE_IR = {
    "name": "tiny_mlp_relu",
    "tensors": [{"name": "addmm", "shape": [8, 16], "dtype": "float32", "role": "input", "binding": "input:0"},
                {"name": "relu", "shape": [8, 16], "dtype": "float32", "role": "output"}],
    "inputs": ["addmm"], "outputs": ["relu"],
    "steps": [{"kind": "kernel", "name": "relu", "loops": [{"var": "i", "extent": 8}, {"var": "j", "extent": 16}],
               "out": "relu[i, j]", "update": "=", "expr": "max(addmm[i, j], 0.0)"}],
}


@pytest.fixture
def no_relu_lowering(monkeypatch):
    import torch

    from solar_assets.translate.torch_lowering import LOWERINGS

    monkeypatch.delitem(LOWERINGS, torch.ops.aten.relu)


def test_auto_lowers_one_unknown_op_through_the_agent(tiny, tmp_path, no_relu_lowering):
    wrong = with_expr(RELU_NODE_IR, "relu", "min(addmm[i, j], 0.0)")
    model = fake(ir_reply(wrong), ir_reply(RELU_NODE_IR))
    with use_chat_model(model, "fake:node"):
        result = pipeline.analyze_workload(tiny, ["H100_SXM"], cache_dir=tmp_path / "cache", translator="auto",
                                           cache_aware=False)
    assert result.ok, result.error
    assert result.rows[0].translator == "tracer+agent" and result.rows[0].validated
    task = model.calls[0][1].content
    assert "aten.relu.default" in task and '"name": "addmm"' in task and "relu_agent_" in task
    assert "TINY" not in task and "self.fc" not in task  # the sub-problem, not the whole source
    assert "validation against aten.relu.default on random inputs" in model.calls[1][-1].content
    with use_chat_model(fake(), "fake:node"):  # the same model again: from the cache, no call
        t = pipeline.translate_source(pipeline.read_source(tiny), tmp_path / "cache", translator="auto")
    assert (t.translator, t.agent_nodes, t.attempts, t.from_cache) == ("tracer+agent", ("relu",), 2, True)
    assert [a.task for a in t.attempt_log] == ["node relu", "node relu"]
    assert [s.name for s in t.program.steps] == ["addmm_bias", "addmm", "relu"]


def test_auto_without_a_model_is_the_tracer_and_says_the_agent_was_not_asked(tiny, tmp_path, no_relu_lowering):
    src = pipeline.read_source(tiny)
    with pytest.raises(Exception, match="no lowering for aten.relu.default.*the agent was not asked: the agent "
                                        "translator needs a chat model"):
        pipeline.translate_source(src, tmp_path / "cache", translator="auto")


def test_auto_leaves_what_the_tracer_lowers_to_the_tracer(tiny, tmp_path):
    model = fake()
    with use_chat_model(model, "fake:unused"):
        t = pipeline.translate_source(pipeline.read_source(tiny), tmp_path / "cache", translator="auto")
    assert t.translator == "tracer" and model.calls == []


# ---------------------------------------------------------------------------- configuration, CLI
def test_agent_without_configuration_is_one_clear_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("SOLAR_TRANSLATOR", "tracer")  # restored after main() sets it
    code = cli.main(["analyze", "data/workloads/gemm.py", "--translator", "agent", "--home", str(tmp_path)])
    err = capsys.readouterr().err
    assert code != 0
    assert err == f"solar: error: {NOT_CONFIGURED}\n"
    assert "SOLAR_LLM=provider:model" in err


def test_a_provider_that_is_not_installed_names_the_extra(monkeypatch):
    monkeypatch.setenv("SOLAR_LLM", "openai:gpt-4o")
    with pytest.raises(AgentNotConfigured, match=r"SOLAR_LLM=openai:gpt-4o: .*langchain-openai.*solar\[openai\]"):
        agent_settings()


def test_tracer_path_needs_no_model(tiny, tmp_path):
    t = pipeline.translate_source(pipeline.read_source(tiny), tmp_path / "cache", translator="tracer")
    assert t.translator == "tracer" and t.model is None and t.attempt_log == ()


# ---------------------------------------------------------------------------- prompt material
def test_worked_examples_are_what_the_tracer_produces():
    """Regenerate with ``python -m solar_assets.agent.examples`` after a tracer change."""
    stored = {e.workload: e for e in load_examples()}
    for data in generate_examples():
        assert stored[data["workload"]].program.model_dump(mode="json") == data["program"], data["workload"]
        assert stored[data["workload"]].source == data["source"]


def test_agent_answers_are_keyed_by_the_local_modules_too():
    """An edited helper beside the workload asks the model again, as the other caches recompute."""
    from types import SimpleNamespace

    from solar_assets.agent.cache import source_key

    plain = SimpleNamespace(sha256="a" * 64, local_sha256="")
    with_helper = SimpleNamespace(sha256="a" * 64, local_sha256="b" * 64)
    edited = SimpleNamespace(sha256="a" * 64, local_sha256="c" * 64)
    assert source_key(plain) == "a" * 64  # unchanged for a file that imports nothing local
    assert len({source_key(plain), source_key(with_helper), source_key(edited)}) == 3
