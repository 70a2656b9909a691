"""Per-op rows that tell apart (module path and class, a label unique in the workload, the user's
line) and their rollup by module, checked against FlopCounterMode's per-module tree and against
the modules' own parameter counts (issue 26, item 1)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import solar

TORCH_FILE = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Stem(nn.Module):
    def __init__(self, in_channels, channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, kernel_size=3, padding=1)
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x)))


class Model(nn.Module):
    """Two stems in a Sequential, a functional pool, a classifier."""

    def __init__(self, channels, num_classes):
        super().__init__()
        self.features = nn.Sequential(Stem(3, channels), nn.ReLU(), Stem(channels, channels))
        self.head = nn.Linear(channels * 4 * 4, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 4)
        x = torch.relu(x)
        return self.head(x.flatten(1))


batch_size = 4
channels = 8
num_classes = 10


def get_inputs():
    return [torch.randn(batch_size, 3, 16, 16)]


def get_init_inputs():
    return [channels, num_classes]
'''


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("per_module")
    path = root / "stems.py"
    path.write_text(TORCH_FILE)
    result = solar.analyze(path, hardware="H100_SXM", home=root / "home")
    assert result.ok, result.errors
    return path, result


def _reference_model(path: Path):
    """The file's own model, built as the file says (FlopCounterMode's and the parameters' reference)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("stems_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Model(*module.get_init_inputs()), module.get_inputs()


def test_per_op_rows_name_module_class_a_unique_label_and_the_calls_line(torch_run):
    path, result = torch_run
    rows = list(result.per_op)
    labels = [r.label for r in rows]
    assert len(set(labels)) == len(labels), labels
    assert {"relu#1", "relu#2", "relu#3", "relu#4"} <= set(labels)  # two stems, the ReLU module, torch.relu
    by_label = {r.label: r for r in rows}
    conv = by_label["convolution#1"]
    assert (conv.module, conv.module_class) == ("features.0.conv", "Conv2d")
    assert (by_label["convolution#2"].module, by_label["addmm#1"].module_class) == ("features.2.conv", "Linear")
    lines = path.read_text().splitlines()
    for r in rows:  # the line is the user's call, in the file: not torch's conv.py or linear.py
        name, number = r.source.split(":")
        assert name == "stems.py", r
        assert 1 <= int(number) <= len(lines)
    assert "self.conv(x)" in lines[int(conv.source.split(":")[1]) - 1]
    assert "self.head(" in lines[int(by_label["addmm#1"].source.split(":")[1]) - 1]
    top_relu = next(r for r in rows if r.module == "" and r.op.startswith("aten.relu"))
    assert top_relu.module_class == "Model" and "torch.relu" in lines[int(top_relu.source.split(":")[1]) - 1]


def test_the_module_rollup_matches_flop_counter_modes_tree_and_the_parameter_counts(torch_run):
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    path, result = torch_run
    model, inputs = _reference_model(path)
    with FlopCounterMode(display=False) as counter:
        model(*inputs)
    reference = {name: sum(counts.values()) for name, counts in counter.get_flop_counts().items()}
    tree = {m.module: m for m in result.per_op.by_module()}
    assert tree[""].depth == 0 and tree[""].share == pytest.approx(1.0)
    assert 2 * tree[""].macs == reference["Global"]
    checked = 0
    for name, flops in reference.items():
        if name.startswith("Model."):
            assert 2 * tree[name[len("Model."):]].macs == flops, name
            checked += 1
    assert checked >= 5  # features, both stems and their convs, the head
    for module_path in ("features.0.conv", "features.0.norm", "features.2", "head"):
        wanted = sum(p.numel() for p in model.get_submodule(module_path).parameters())
        assert tree[module_path].params == wanted, module_path
    assert tree[""].params == sum(p.numel() for p in model.parameters())
    assert tree["features"].ops == sum(1 for r in result.per_op if r.module.startswith("features"))
    assert tree["features.1"].module_class == "ReLU"
    two = result.per_op.by_module(depth=1)
    assert {m.module for m in two} == {"", "features", "head"} and all(m.depth <= 1 for m in two)
    assert torch.is_tensor(inputs[0])


JAX_LINEN = '''import jax
import jax.numpy as jnp
from flax import linen as nn

BATCH = 4
D_IN = 16
HIDDEN = 32


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.relu(nn.Dense(HIDDEN)(x))


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = Block()(x)
        return nn.Dense(D_IN)(x)


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (BATCH, D_IN))]


def get_init_inputs():
    return []
'''

JAX_NNX = '''import jax
from flax import nnx

BATCH = 4
D_IN = 16
HIDDEN = 32


class Model(nnx.Module):
    def __init__(self, d_in, hidden, *, rngs: nnx.Rngs):
        self.fc1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.fc2 = nnx.Linear(hidden, d_in, rngs=rngs)

    def __call__(self, x):
        return self.fc2(jax.nn.relu(self.fc1(x)))


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (BATCH, D_IN))]


def get_init_inputs():
    return [D_IN, HIDDEN]
'''


@pytest.mark.parametrize("text, first, second", [(JAX_LINEN, "Model/Block_0/Dense_0", "Model/Dense_0"),
                                                 (JAX_NNX, "Model/fc1", "Model/fc2")],
                         ids=["linen", "nnx"])
def test_jax_rows_carry_the_module_path_and_the_users_line_and_roll_up(tmp_path, text, first, second):
    path = tmp_path / "mlp.py"
    path.write_text(text)
    result = solar.analyze(path, hardware="H100_SXM", home=tmp_path / "home")
    assert result.ok, result.errors
    rows = list(result.per_op)
    dots = {r.module: r for r in rows if r.op == "dot_general"}
    assert set(dots) == {first, second}
    lines = path.read_text().splitlines()
    for r in dots.values():
        name, number = r.source.split(":")
        assert name == "mlp.py" and ("Dense" in lines[int(number) - 1] or "self.fc" in lines[int(number) - 1]), r
    assert all(r.source.startswith("mlp.py:") for r in rows), [(r.label, r.source) for r in rows]  # jitted relu too
    tree = {m.module: m for m in result.per_op.by_module()}
    root = next(m for m in tree.values() if m.depth == 0)
    assert (root.module, root.module_class) == ("Model", "Model")  # the name stack's first name is the model
    assert tree[first].macs == 4 * 16 * 32 and tree[second].macs == 4 * 32 * 16
    assert tree[first].params == 16 * 32 + 32 and tree[second].params == 32 * 16 + 16
    assert root.macs == sum(r.macs for r in rows)


@pytest.mark.slow
def test_cli_by_module_prints_the_tree_and_writes_it_with_every_depth(torch_run, tmp_path, capsys):
    from solar_assets.cli import main

    path, _ = torch_run
    out = tmp_path / "report"
    code = main(["analyze", str(path), "--no-dagster", "--hardware", "H100_SXM", "--by", "module", "--depth", "1",
                 "--no-progress", "--home", str(tmp_path / "home"), "--output", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    tree = text[text.index("By module"):]
    assert "\n(model: Model)" in tree or "\n(model)" in tree
    assert "\n  features (Sequential)" in tree and "\n  head (Linear)" in tree
    assert "features.0" not in tree  # depth 1
    document = json.loads((out / "report.json").read_text())
    assert {m["module"] for m in document["per_module"]} >= {"", "features", "features.0", "features.0.conv"}
    csv = (out / "per_module.csv").read_text().splitlines()
    assert csv[0].startswith("workload,hardware,module,module_class,depth") and len(csv) == 1 + len(document["per_module"])
    with pytest.raises(SystemExit):
        main(["analyze", str(path), "--by", "modules"])
    assert main(["analyze", str(path), "--no-dagster", "--depth", "-1", "--no-progress",
                 "--home", str(tmp_path / "home")]) != 0
    assert "--depth takes a number of levels from 0" in capsys.readouterr().err
