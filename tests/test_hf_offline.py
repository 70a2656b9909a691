"""HuggingFace models by name, offline (solar_assets/workloads/hf_offline.py; KernelBench level 4).

The workloads are the project's own, in KernelBench's level-4 style: ``AutoConfig.from_pretrained``
at module level, ``AutoModelForCausalLM.from_pretrained(name, config=config)`` in ``__init__``,
lower-case sizes. The gpt2 configs are made tiny by keyword overrides (same architecture, small
widths) so the tests take seconds.
"""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

transformers = pytest.importorskip("transformers", reason="transformers is not installed (solar's 'hf' extra: "
                                   "pip install -e '.[hf]')")

from solar_assets import pipeline  # noqa: E402
from solar_assets.coverage.flop_reference import solar_macs  # noqa: E402
from solar_assets.errors import SolarError  # noqa: E402
from solar_assets.sizing import ValidationBudget  # noqa: E402
from solar_assets.workloads import load_torch_workload, read_workload_source  # noqa: E402

LEVEL4_STYLE = '''import os
import torch
from transformers import AutoModelForCausalLM, AutoConfig

class Model(torch.nn.Module):
    def __init__(self, model_name, config):
        super().__init__()
        self.model_name = model_name
        self.config = config
        self.model = AutoModelForCausalLM.from_pretrained(self.model_name, config=self.config)

    def forward(self, x):
        return self.model(x).logits

model_name = "{name}"
config = AutoConfig.from_pretrained(model_name{overrides})
hub_offline = os.environ.get("HF_HUB_OFFLINE")
vocab_size = config.vocab_size
sequence_length = {seq}
batch_size = {batch}

def get_inputs():
    inputs = torch.randint(0, vocab_size, (batch_size, sequence_length))
    return [inputs]

def get_init_inputs():
    return [model_name, config]
'''
TINY = ", n_layer={layers}, n_embd=32, n_head=4, vocab_size=61, n_positions=32"


def _write(tmp_path: Path, name: str = "gpt2", layers: int = 2, seq: int = 9, batch: int = 3,
           file: str = "gpt2_tiny_bs3_seq9.py", overrides: str | None = None) -> Path:
    if overrides is None:
        overrides = TINY.format(layers=layers) if name == "gpt2" else ""
    path = tmp_path / file
    path.write_text(LEVEL4_STYLE.format(name=name, overrides=overrides, seq=seq, batch=batch), encoding="utf-8")
    return path


@pytest.fixture
def no_network(monkeypatch):
    """Any socket connection fails the test: the hub must never be contacted."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network contacted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


def _flop_counter_flops(path: Path) -> int:
    """FlopCounterMode's FLOPs of one forward of the model, built offline at the file's size."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    w = load_torch_workload(read_workload_source(path))
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        w.model(*w.inputs)
    return int(counter.get_total_flops())


@pytest.mark.slow
def test_level4_style_gpt2_traces_validates_and_counts_flop_counter_macs(tmp_path, no_network):
    path = _write(tmp_path)
    src = pipeline.read_source(path)
    translation = pipeline.translate_source(src, None)
    assert translation.diagnostics == ()  # traced on fake tensors
    golden = pipeline.golden_for(src, None, {})
    validated = pipeline.validate_translation(src, translation, golden, None)
    assert validated.result.ok and validated.validated_size == "full"
    # every MAC of gpt2 is in an addmm (Conv1D) or a matmul (attention, LM head), which
    # FlopCounterMode counts at 2 FLOPs each
    flops = _flop_counter_flops(path)
    b, s, d, v, layers = 3, 9, 32, 61, 2
    per_layer = b * s * d * 3 * d + 2 * b * s * s * d + b * s * d * d + 2 * b * s * d * 4 * d
    assert flops == 2 * (layers * per_layer + b * s * d * v)
    assert 2 * solar_macs(path) == flops


def test_hub_offline_is_set_while_the_file_runs(tmp_path, no_network):
    w = load_torch_workload(read_workload_source(_write(tmp_path)))
    assert w.module.hub_offline == "1"
    assert os.environ.get("HF_HUB_OFFLINE") is None  # restored afterwards
    assert type(w.model.model).__name__ == "GPT2LMHeadModel"
    assert w.model.model.config.n_layer == 2 and w.model.model.config.n_embd == 32


def test_table_fields_reach_the_config(tmp_path, no_network):
    """opt-1.3b's published widths, built on fake tensors: no 5 GB of weights allocated."""
    path = _write(tmp_path, name="facebook/opt-1.3b", seq=5, batch=1, file="opt_bs1_seq5.py")
    w = load_torch_workload(read_workload_source(path), fake=True)
    config = w.model.model.config
    assert (config.hidden_size, config.ffn_dim, config.num_hidden_layers, config.num_attention_heads) == \
        (2048, 8192, 24, 32)
    assert sum(p.numel() for p in w.model.parameters()) > 1_300_000_000  # the whole model, as fake tensors


def test_unknown_model_name_is_one_line(tmp_path, no_network):
    path = _write(tmp_path, name="acme/unheard-of-7b", file="unknown.py")
    with pytest.raises(SolarError) as e:
        load_torch_workload(read_workload_source(path))
    message = str(e.value)
    assert "\n" not in message
    assert message == (f"{path}: acme/unheard-of-7b is not in solar's offline table of HuggingFace configs "
                       "(solar_assets/workloads/hf_configs.py); add its config.json fields")


def test_transformers_missing_names_the_extra(tmp_path, monkeypatch):
    path = _write(tmp_path)
    monkeypatch.setitem(__import__("sys").modules, "transformers", None)  # import transformers fails
    with pytest.raises(SolarError) as e:
        load_torch_workload(read_workload_source(path))
    assert "\n" not in str(e.value)
    assert str(e.value).startswith(f"{path}: the file imports transformers, which is not installed")
    assert "pip install -e '.[hf]'" in str(e.value)


@pytest.mark.slow
def test_validation_with_fewer_layers(tmp_path, no_network):
    """Over the validation budget, a table model validates with the table's fewer layers (gpt2: 2)
    at batch ≤ 2 and sequence ≤ 16; the full-size IR (4 layers) is that IR with its layers repeated."""
    path = _write(tmp_path, layers=4, seq=20, batch=5, file="gpt2_tiny_bs5_seq20.py")
    src = pipeline.read_source(path)
    translation = pipeline.translate_source(src, None)
    size = pipeline.validation_size_for(src, translation, None, ValidationBudget(tensor_bytes=1 << 10))
    assert size.constants == {"sequence_length": 16, "batch_size": 2, "hf_layers": 2}
    golden = pipeline.golden_for(src, None, size)
    validated = pipeline.validate_translation(src, translation, golden, None)
    assert validated.result.ok
    assert validated.validated_size == "sequence_length=16,batch_size=2,hf_layers=2"
    small = validated.validated_program
    # 4 vs 2 layers: the difference is two layers' worth of weights (12 tensors each)
    weights = lambda p: [t for t in p.tensors if t.role == "weight"]  # noqa: E731
    assert len(weights(translation.program)) - len(weights(small)) == 2 * 12


@pytest.mark.slow
def test_layer_structure_check_rejects_a_different_model(tmp_path, no_network):
    """The fewer-layers structure check is not a blank cheque: a validated IR of another shape of
    model (here: one layer more in the validated IR than the table gives) is refused."""
    from solar_assets.sizing import ValidationSizeError
    from solar_assets.sizing import check_same_structure

    full = pipeline.translate_source(pipeline.read_source(_write(tmp_path, layers=4)), None).program
    other = pipeline.translate_source(pipeline.read_source(_write(tmp_path, layers=3, file="three.py")), None).program
    check_same_structure("x.py", full, other, {"hf_layers": 3})  # 3 → 4 layers: one block more
    electra = _write(tmp_path, name="google/electra-small-discriminator", seq=5, batch=1, file="electra.py")
    different = pipeline.translate_source(pipeline.read_source(electra), None).program
    with pytest.raises(ValidationSizeError):
        check_same_structure("x.py", full, different, {"hf_layers": 2})


TINY_REFORMER = (', hidden_size=32, attention_head_size=8, num_attention_heads=4, feed_forward_size=64, '
                 'axial_pos_shape=[8, 16], axial_pos_embds_dim=[8, 24], max_position_embeddings=128, '
                 'attn_layers=["local", "lsh"], local_attn_chunk_length=8, lsh_attn_chunk_length=16')


@pytest.mark.slow
def test_reformer_positions_trace_with_static_shapes_and_validate(tmp_path, no_network):
    """Reformer's axial position embeddings read ``position_ids.max().item()``; offline, the
    default positions' maximum comes from the shape, so the export has no data-dependent length and
    the IR (local and LSH attention, at the table's widths made tiny) validates at full size."""
    path = _write(tmp_path, name="google/reformer-enwik8", seq=12, batch=2, file="reformer_tiny.py",
                  overrides=TINY_REFORMER)
    src = pipeline.read_source(path)
    translation = pipeline.translate_source(src, None)
    assert translation.diagnostics == ()
    golden = pipeline.golden_for(src, None, {})
    assert pipeline.validate_translation(src, translation, golden, None).result.ok


def test_reformer_default_positions_equal_transformers_own(tmp_path, no_network):
    """The offline axial encodings (default positions) equal transformers' own forward's, exactly."""
    import torch

    path = _write(tmp_path, name="google/reformer-enwik8", seq=12, batch=2, file="reformer_tiny.py",
                  overrides=TINY_REFORMER)
    w = load_torch_workload(read_workload_source(path))
    embeddings = w.model.model.reformer.embeddings
    axial = embeddings.position_embeddings
    positions = torch.arange(12).unsqueeze(0).expand(2, 12)
    theirs = type(axial).forward(axial, positions)  # the class's forward: transformers' code
    with torch.no_grad():
        ours = embeddings(input_ids=w.inputs[0])  # the model's own call: default positions, patched
        expected = embeddings.word_embeddings(w.inputs[0]) + theirs
    assert torch.equal(ours, expected)
