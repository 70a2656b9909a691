"""Training-step SOL (issue 28): the step traced from autograd and torch.optim, validated, bounded.

References are independent of the step's own golden run: MACs and bytes computed by hand,
gradients from a plain ``loss.backward()`` on the file's model, the update from a
``torch.optim.AdamW`` / ``SGD`` object stepping that model, and FlopCounterMode over that eager
forward and backward.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import solar
from solar_assets.workloads.training import ADAMW_HYPERPARAMETERS, SGD_HYPERPARAMETERS, STEPS_TAKEN, TrainSpec

REPO = Path(__file__).resolve().parents[1]
TRAINING = REPO / "data" / "training"
MLP = TRAINING / "mlp_classifier.py"
CNN = TRAINING / "small_cnn_classifier.py"
BLOCK = TRAINING / "transformer_block_bf16.py"


def _traced(path: Path, spec: TrainSpec):
    """The step's IR, its golden run (inputs, parameters and state as bindings) and the IR's outputs."""
    from solar_assets.execute import execute_program
    from solar_assets.golden import make_golden
    from solar_assets.translate.torch_tracer import trace_torch
    from solar_assets.workloads import read_workload_source

    src = read_workload_source(path, train=spec)
    program = trace_torch(src).program
    golden = make_golden(src)
    outputs = execute_program(program, golden.bindings(np.float64), np.float64)
    return program, golden, outputs


def _eager(path: Path):
    """The file's model and inputs, built as every stage builds them (same seeds), in training mode."""
    from solar_assets.workloads import load_torch_workload, read_workload_source

    w = load_torch_workload(read_workload_source(path))
    return w.model.train(), w.inputs


def _loss(path: Path, model, inputs):
    out = model(*inputs)
    module_loss = getattr(_eager_module(path), "loss", None)
    return module_loss(out) if module_loss else out.float().sum()


def _eager_module(path: Path):
    from solar_assets.workloads import load_torch_workload, read_workload_source

    return load_torch_workload(read_workload_source(path)).module


@pytest.fixture(scope="module")
def mlp_analysis(tmp_path_factory):
    return solar.analyze(MLP, hardware="H100_SXM", train=True, home=tmp_path_factory.mktemp("home"))


def test_mlp_step_macs_and_compulsory_bytes_by_hand(mlp_analysis):
    row = mlp_analysis.rows[0]
    assert row.workload == "mlp_classifier[train]"
    b, i, h, c = 64, 512, 1024, 10
    forward = b * (i * h + h * c)
    backward = b * (i * h + h * c) + b * h * c  # both weight gradients, the hidden layer's input gradient
    assert row.macs == forward + backward == 69_074_944
    params = i * h + h + h * c + c
    # read once: x, the integer target, each parameter and AdamW's two moments; written once: each
    # parameter and both moments, and the loss. The gradients stay on chip (the update consumes them).
    fused = b * i * 4 + b * 8 + 3 * params * 4 + 3 * params * 4 + 4
    assert row.bytes_fused == fused
    phases = {r.phase for r in mlp_analysis.per_op}
    assert phases == {"forward", "backward", "optimizer"}
    by_phase = {p: sum(r.macs for r in mlp_analysis.per_op if r.phase == p) for p in phases}
    assert by_phase == {"forward": forward, "backward": backward, "optimizer": 0}


def test_the_gradients_equal_a_plain_backward():
    """With no optimizer the gradients are the step's results; the IR's equal ``p.grad`` after
    ``loss.backward()`` on the file's own model (and the loss its loss)."""
    program, golden, outputs = _traced(MLP, TrainSpec(optimizer="none"))
    model, inputs = _eager(MLP)
    loss = model(*inputs)
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    assert len(program.outputs) == 1 + len(grads) and not program.checked_only
    np.testing.assert_allclose(outputs[0], loss.item(), rtol=1e-5)
    for got, want in zip(outputs[1:], grads):
        np.testing.assert_allclose(got, want.double().numpy(), rtol=1e-4, atol=1e-6 * float(want.abs().max()))


def _preset(opt, model, golden, kinds):
    for name, p in model.named_parameters():
        state = {k: torch.from_numpy(golden.params[f"buffer:{k}__{name.replace('.', '__')}"]).clone() for k in kinds}
        if "exp_avg" in state:
            state["step"] = torch.tensor(float(STEPS_TAKEN))
        if "momentum" in state:
            state = {"momentum_buffer": state["momentum"]}
        opt.state[p] = state


def test_adamw_matches_torch_optim_adamw_stepping_the_model():
    program, golden, outputs = _traced(MLP, TrainSpec())
    model, inputs = _eager(MLP)
    h = ADAMW_HYPERPARAMETERS
    opt = torch.optim.AdamW(model.parameters(), lr=h["lr"], betas=(h["beta1"], h["beta2"]), eps=h["eps"],
                            weight_decay=h["weight_decay"])
    _preset(opt, model, golden, ("exp_avg", "exp_avg_sq"))
    model(*inputs).backward()
    opt.step()
    params = list(model.parameters())
    n = len(params)
    assert len(program.checked_only) == n  # the gradients: validated, not charged
    updated = outputs[1 + n:1 + 2 * n]
    moments = outputs[1 + 2 * n:]
    for got, p in zip(updated, params):
        np.testing.assert_allclose(got, p.detach().double().numpy(), rtol=1e-5, atol=1e-7)
    expected = [opt.state[p][k] for p in params for k in ("exp_avg", "exp_avg_sq")]
    for got, want in zip(moments, expected):
        np.testing.assert_allclose(got, want.double().numpy(), rtol=1e-4, atol=1e-6 * float(want.abs().max()))


@pytest.mark.slow
def test_sgd_with_momentum_matches_torch_optim_sgd():
    program, golden, outputs = _traced(CNN, TrainSpec(optimizer="sgd"))
    model, inputs = _eager(CNN)
    h = SGD_HYPERPARAMETERS
    opt = torch.optim.SGD(model.parameters(), lr=h["lr"], momentum=h["momentum"])
    _preset(opt, model, golden, ("momentum",))
    _loss(CNN, model, inputs).backward()
    opt.step()
    params = list(model.parameters())
    n = len(params)
    returned = _returned(program, outputs)  # BatchNorm's running statistics are in-place updates, listed first
    assert len(returned) == 1 + 3 * n  # loss, gradients, parameters, momentum buffers
    for got, p in zip(returned[1 + n:1 + 2 * n], params):
        np.testing.assert_allclose(got, p.detach().double().numpy(), rtol=1e-4, atol=1e-6)
    for got, p in zip(returned[1 + 2 * n:], params):
        want = opt.state[p]["momentum_buffer"]
        np.testing.assert_allclose(got, want.double().numpy(), rtol=1e-4, atol=1e-6 * float(want.abs().max()))


def _returned(program, outputs):
    """The values the step returns, without the outputs that stand for in-place updates."""
    from solar_assets.ir.updates import updated_target

    return [v for name, v in zip(program.outputs, outputs) if updated_target(program.tensor(name)) is None]


@pytest.mark.parametrize("path", [MLP, CNN, BLOCK], ids=lambda p: p.stem)
def test_flop_counter_mode_counts_the_forward_and_backward_macs(path):
    """FlopCounterMode over the eager ``loss.backward()``: 2 × the IR's MACs (all in the forward and
    backward phases: the optimizer multiplies no two tensors into a sum)."""
    from torch.utils.flop_counter import FlopCounterMode

    from solar_assets.graph import build_einsum_graph

    program, _, _ = _traced(path, TrainSpec(optimizer="none")) if path != BLOCK else (None, None, None)
    if program is None:  # the bf16 block: tracing alone (its execution is the validation's, elsewhere)
        from solar_assets.translate.torch_tracer import trace_torch
        from solar_assets.workloads import read_workload_source

        program = trace_torch(read_workload_source(path, train=TrainSpec(optimizer="none"))).program
    model, inputs = _eager(path)
    counter = FlopCounterMode(display=False)
    with counter:
        _loss(path, model, inputs).backward()
    assert 2 * build_einsum_graph(program).macs == counter.get_total_flops() > 0


def test_bf16_parameters_train_through_fp32_master_weights():
    from solar_assets.translate.torch_tracer import trace_torch
    from solar_assets.workloads import read_workload_source

    program = trace_torch(read_workload_source(BLOCK, train=TrainSpec())).program
    weights = {t.binding: t for t in program.tensors if t.role == "weight"}
    params = {b.removeprefix("param:"): t for b, t in weights.items() if b.startswith("param:")}
    assert params and all(t.dtype == "bfloat16" for t in params.values())
    for name in params:
        key = name.removeprefix("model.").replace(".", "__")
        for kind in ("master", "exp_avg", "exp_avg_sq"):
            assert weights[f"buffer:{kind}__{key}"].dtype == "float32", (kind, name)
    outputs = [program.tensor(o) for o in program.result_outputs]
    n = len(params)
    assert [t.dtype for t in outputs[1:1 + n]] == ["bfloat16"] * n  # the parameters, rounded from the master
    assert all(t.dtype == "float32" for t in outputs[1 + n:])  # masters and moments


def test_the_cli_names_training_rows_and_prints_phases(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "solar_assets", "analyze", str(CNN), "--hardware", "H100_SXM", "--train",
         "--optimizer", "sgd", "--no-dagster", "--no-progress", "--per-op", "4", "--home", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "small_cnn_cl" in done.stdout and "[train:sgd]" in done.stdout
    assert "unfused time by phase: forward" in done.stdout and "optimizer" in done.stdout
    assert " phase " in done.stdout
    bad = subprocess.run([sys.executable, "-m", "solar_assets", "analyze", str(CNN), "--optimizer", "sgd",
                          "--home", str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 2 and "add --train" in bad.stderr


def test_a_workload_without_a_differentiable_output_says_so_in_one_line(tmp_path):
    path = tmp_path / "argmax_only.py"
    path.write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 4)

            def forward(self, x):
                return torch.argmax(self.fc(x), dim=-1)


        def get_inputs():
            return [torch.randn(3, 8)]


        def get_init_inputs():
            return []
        """))
    from solar_assets.errors import SolarError

    with pytest.raises(SolarError) as caught:
        solar.analyze(path, hardware="H100_SXM", train=True, home=tmp_path / "home")
    message = str(caught.value)
    assert "argmax_only.py" in message and "not differentiable" in message


def test_a_model_whose_own_backward_autograd_refuses_is_not_trainable_as_written(tmp_path):
    """ShuffleNet-style: ``out += shortcut(x)`` writes into a ReLU output its backward saved; the
    file's own eager ``loss.backward()`` raises, so there is no step to translate (one line)."""
    path = tmp_path / "inplace_residual.py"
    path.write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.conv = nn.Conv2d(channels, channels, 3, padding=1)

            def forward(self, x):
                out = torch.relu(self.conv(x))
                out += x
                return out


        channels = 4


        def get_inputs():
            return [torch.randn(2, channels, 8, 8)]


        def get_init_inputs():
            return [channels]
        """))
    import importlib.util

    spec = importlib.util.spec_from_file_location("inplace_residual", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    eager = module.Model(*module.get_init_inputs())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        eager(*module.get_inputs()).sum().backward()  # the independent reference: eager autograd itself

    from solar_assets.errors import SolarError

    with pytest.raises(SolarError) as caught:
        solar.analyze(path, hardware="H100_SXM", train=True, home=tmp_path / "home")
    message = str(caught.value)
    assert f"{path}: not trainable as written: autograd refuses" in message and "export failed" not in message
    assert len(message.splitlines()) == 1


def test_the_training_spec_is_part_of_the_workload_key():
    from solar_assets.workloads import read_workload_source

    plain = read_workload_source(MLP)
    adamw, sgd = read_workload_source(MLP, train=TrainSpec()), read_workload_source(MLP, train=TrainSpec("sgd"))
    assert len({plain.version, adamw.version, sgd.version}) == 3
    assert len({plain.dependencies_sha256, adamw.dependencies_sha256, sgd.dependencies_sha256}) == 3
    assert (plain.name, adamw.name, sgd.name) == ("mlp_classifier", "mlp_classifier[train]", "mlp_classifier[train:sgd]")


@pytest.mark.slow
def test_a_training_step_is_its_own_dagster_partition(tmp_path):
    """On the default (Dagster) path the step and the forward pass of one file are two partitions
    (``gemm@train``), two rows, and neither call's row is the other's."""
    from solar_assets.asset_compute.keys import split_train_key, train_key

    assert split_train_key(train_key("level2.12_Gemm", TrainSpec("sgd", "mean"))) == \
        ("level2.12_Gemm", TrainSpec("sgd", "mean"))
    assert split_train_key("stem@0a1b2c3d") == ("stem@0a1b2c3d", None)

    def call(*extra):
        done = subprocess.run([sys.executable, "-m", "solar_assets", "analyze", str(MLP), "--hardware", "H100_SXM",
                               "--json", "--no-progress", "--home", str(tmp_path), *extra],
                              capture_output=True, text=True, cwd=REPO, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        import json

        return {r["workload"]: r["macs"] for r in json.loads(done.stdout)["rows"]}

    assert call("--train") == {"mlp_classifier[train]": 69_074_944}
    assert call() == {"mlp_classifier": 34_209_792}
    assert call("--train") == {"mlp_classifier[train]": 69_074_944}  # unchanged: from its own partition
    from solar_assets.dagster_defs.instance import solar_instance

    with solar_instance(tmp_path) as instance:
        keys = set(instance.get_dynamic_partitions("workload"))
    assert {"mlp_classifier", "mlp_classifier@train"} <= {split_train_key(k)[0].split(".")[-1] + (
        "@train" if split_train_key(k)[1] else "") for k in keys}


JAX_MLP = '''import jax
import jax.numpy as jnp
import flax.linen as nn


class Model(nn.Module):
    hidden: int
    out: int

    @nn.compact
    def __call__(self, x):
        x = jnp.tanh(nn.Dense(self.hidden)(x))
        return nn.Dense(self.out)(x)


batch_size = 8
in_features = 16


def get_inputs():
    return [jax.random.normal(jax.random.key(1), (batch_size, in_features))]


def get_init_inputs():
    return [32, 4]
'''


def test_a_flax_step_takes_optax_sgd_by_hand(tmp_path):
    """A linen MLP's step: MACs by hand (backward: both weight gradients and the hidden layer's
    input gradient), phases from the name stack, and the updated parameters equal SGD with momentum
    written out here over ``jax.grad`` of the plain loss."""
    import jax
    import jax.numpy as jnp

    from solar_assets.execute import execute_program
    from solar_assets.golden.jax_golden import make_jax_golden
    from solar_assets.translate.jax_tracer import trace_jax
    from solar_assets.workloads import read_workload_source
    from solar_assets.workloads.jax_loader import load_jax_workload

    path = tmp_path / "linen_mlp.py"
    path.write_text(JAX_MLP)
    analysis = solar.analyze(path, hardware="H100_SXM", train=True, optimizer="sgd", home=tmp_path / "home")
    row = analysis.rows[0]
    assert row.workload == "linen_mlp[train:sgd]"
    forward = 8 * (16 * 32 + 32 * 4)
    assert row.macs == forward + forward + 8 * 32 * 4
    assert {r.phase for r in analysis.per_op if r.op != "output"} == {"forward", "backward", "optimizer"}

    src = read_workload_source(path, train=TrainSpec("sgd"))
    program = trace_jax(src).program
    golden = make_jax_golden(src)
    outputs = execute_program(program, golden.bindings(np.float64), np.float64)
    plain = load_jax_workload(read_workload_source(path))
    names = sorted(plain.params)
    grads = jax.grad(lambda p: plain.fn(p, *plain.inputs).astype(jnp.float32).sum())(dict(plain.params))
    h = SGD_HYPERPARAMETERS
    n = len(names)
    updated = dict(zip([b for b in golden.params if b.startswith("param:")], outputs[1 + n:1 + 2 * n]))
    for name in names:
        buf = golden.params[f"buffer:momentum__{name.removeprefix('param:').replace('.', '__')}"]
        want = np.asarray(plain.params[name], np.float64) - h["lr"] * (h["momentum"] * buf + np.asarray(grads[name]))
        np.testing.assert_allclose(updated[name], want, rtol=1e-5, atol=1e-7)


@pytest.mark.slow
def test_a_measured_training_step_does_not_beat_its_bounds(tmp_path):
    """``--train --measure`` times the eager step itself (forward, backward, torch.optim) on this
    host and audits it against the step's bounds."""
    done = subprocess.run(
        [sys.executable, "-m", "solar_assets", "analyze", str(MLP), "--hardware", "host", "--train", "--measure",
         "--runs", "3", "--no-dagster", "--no-progress", "--json", "--home", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    rows = [r for r in json.loads(done.stdout)["rows"] if r["hardware"] == "host"]
    assert [r["workload"] for r in rows] == ["mlp_classifier[train]"]
    assert rows[0]["measured_s"] > 0 and not rows[0]["violation"]
    assert rows[0]["measured_s"] >= rows[0]["sol_fused_s"]


RECURRENT_AND_ATTENTION = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.q = nn.Linear(hidden, hidden)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        h, _ = self.lstm(x)
        q = self.q(h).unsqueeze(1)
        a = F.scaled_dot_product_attention(q, h.unsqueeze(1), h.unsqueeze(1), is_causal=True)
        return self.drop(a).squeeze(1)


batch_size = 2
seq_len = 6
features = 8
hidden = 12


def get_inputs():
    return [torch.randn(batch_size, seq_len, features)]


def get_init_inputs():
    return [features, hidden]
'''


@pytest.mark.slow
def test_an_lstm_causal_attention_and_training_mode_dropout_train(tmp_path):
    """The ops a step meets beyond a forward pass: an LSTM's cell (in-place gate updates:
    functionalised), attention differentiated through its decomposition, and dropout's mask in
    training mode (the same pattern in the IR and the eager step)."""
    path = tmp_path / "lstm_attention.py"
    path.write_text(RECURRENT_AND_ATTENTION)
    analysis = solar.analyze(path, hardware="H100_SXM", train=True, home=tmp_path / "home")
    row = analysis.rows[0]
    assert row.workload == "lstm_attention[train]" and row.validated
    assert {r.phase for r in analysis.per_op if r.op != "output"} == {"forward", "backward", "optimizer"}
    assert any(r.module == "lstm" and r.phase == "backward" for r in analysis.per_op)


PADDED_TRANSPOSED_CONV = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super(Model, self).__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose2d(x)

batch_size = 2
in_channels = 3
out_channels = 4
kernel_size = 3
stride = 2
padding = 1

def get_inputs():
    x = torch.rand(batch_size, in_channels, 5, 6)
    return [x]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
'''


def test_a_padded_transposed_convolution_weight_gradient_reads_zeros_outside(tmp_path):
    """The weight gradient of a padded transposed convolution windows over the output's gradient;
    with the default loss that gradient is ``ones`` broadcast, and a window leaving it must read
    the pad's zeros, not the broadcast element (KernelBench level 1's transposed convolutions)."""
    path = tmp_path / "conv_transposed_padded.py"
    path.write_text(PADDED_TRANSPOSED_CONV)
    program, golden, outputs = _traced(path, TrainSpec(optimizer="none"))
    model, inputs = _eager(path)
    model.zero_grad()
    model(*inputs).sum().backward()
    grads = {n: o for n, o in zip(program.outputs, outputs) if "weight" in n}
    [got] = grads.values()
    want = model.conv_transpose2d.weight.grad.double().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())


HARDSIGMOID = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardsigmoid(x)

batch_size = 4
dim = 64

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []
'''


def test_a_hardsigmoid_step_gives_autograds_own_float64_gradient(tmp_path):
    """ATen's hardsigmoid backward multiplies by ``1.0f / 6.0f`` for every dtype; the IR's gradient
    is the framework's float64 autograd result to the last bit (1/6 in double failed the 1e-9
    float64 check: KernelBench level 1's HardSigmoid step)."""
    path = tmp_path / "hardsigmoid.py"
    path.write_text(HARDSIGMOID)
    program, golden, outputs = _traced(path, TrainSpec(optimizer="none"))
    _, inputs = _eager(path)
    x = inputs[0].double().requires_grad_(True)
    torch.nn.functional.hardsigmoid(x).sum().backward()  # the reference: autograd itself, in float64
    [grad] = [o for n, o in zip(program.outputs, outputs) if o.shape == tuple(x.shape)]
    np.testing.assert_array_equal(grad, x.grad.numpy())
    analysis = solar.analyze(path, hardware="H100_SXM", train=True, optimizer="none", home=tmp_path / "home")
    assert analysis.rows[0].validated
