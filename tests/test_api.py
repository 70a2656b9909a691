"""``import solar`` as a notebook uses it: ``solar.analyze`` on an nn.Module, a JAX function, a Flax
module and a workload file, reading the rows, the per-op table, the IR and the validation table."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import solar
import solar_assets
from solar_assets.errors import SolarError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))


def test_solar_is_the_package_under_its_distribution_name():
    assert solar.__version__ == solar_assets.__version__
    assert solar.analyze is solar_assets.api.analyze
    assert solar.pipeline is solar_assets.pipeline  # everything else is forwarded, never copied
    done = subprocess.run([sys.executable, "-m", "solar", "--version"], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == f"solar {solar.__version__}"


def test_an_nn_module_instance():
    import torch
    import torch.nn as nn

    batch_size, in_channels, out_channels, size, hidden = 2, 3, 4, 8, 5

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, 3)
            self.fc = nn.Linear(out_channels * 6 * 6, hidden)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).flatten(1))

    torch.manual_seed(3)
    model, x = Model(), torch.randn(batch_size, in_channels, size, size)
    weight, rng = model.fc.weight.detach().clone(), torch.random.get_rng_state()
    result = solar.analyze(model, [x], hardware=["H100_SXM", "B200"], name="conv_net")
    assert result.ok, result.errors
    assert [(r.workload, r.hardware, r.validated) for r in result.rows] == [("conv_net", "H100_SXM", True),
                                                                             ("conv_net", "B200", True)]
    assert result.rows[0].macs == batch_size * out_channels * 6 * 6 * in_channels * 9 + batch_size * 144 * hidden
    assert result.rows[0].source == "<live Model conv_net>"
    frame = result.to_pandas()
    assert list(frame["hardware"]) == ["H100_SXM", "B200"]
    per_op = result.per_op.to_pandas()
    on_h100 = per_op[per_op["hardware"] == "H100_SXM"].set_index("node")
    assert on_h100.loc["convolution", "module"] == "conv" and on_h100.loc["addmm", "module"] == "fc"
    assert on_h100.loc["convolution", "macs"] == batch_size * out_channels * 36 * in_channels * 9
    assert on_h100["share"].sum() == pytest.approx(1.0)
    assert "param:conv.weight" in result.ir and "aten.convolution" in result.ir
    checks = result.validation.to_pandas()
    assert result.validation.ok and set(checks["reference"]) == {"outputs", "outputs64"}
    # the user's model and random stream are as they were
    assert model.fc.weight.dtype == torch.float32 and torch.equal(model.fc.weight, weight)
    assert torch.equal(torch.random.get_rng_state(), rng)


def test_a_jax_function():
    import jax.numpy as jnp

    def attention_scores(q, k):
        return jnp.tanh(q @ k.T)

    q, k = jnp.ones((4, 8)), jnp.ones((6, 8))
    result = solar.analyze(attention_scores, [q, k])
    assert result.ok, result.errors
    (row,) = result.rows
    assert (row.workload, row.macs) == ("attention_scores", 4 * 6 * 8)
    ops = {r.op for r in result.per_op}
    assert "dot_general" in ops and "tanh" in ops


def test_a_flax_linen_and_an_nnx_module():
    import jax.numpy as jnp
    from flax import linen, nnx

    class Dense(linen.Module):
        features: int

        @linen.compact
        def __call__(self, x):
            return linen.relu(linen.Dense(self.features)(x))

    class Linear(nnx.Module):
        def __init__(self, rngs):
            self.lin = nnx.Linear(5, 6, rngs=rngs)

        def __call__(self, x):
            return nnx.relu(self.lin(x))

    x = jnp.ones((2, 5))
    for target in (Dense(6), Linear(nnx.Rngs(0))):
        result = solar.analyze(target, [x])
        assert result.ok, result.errors
        assert result.rows[0].macs == 2 * 5 * 6
        dot = [r for r in result.per_op if r.op == "dot_general"]
        assert len(dot) == 1 and dot[0].macs == 2 * 5 * 6
        assert dot[0].bytes == 4 * (2 * 5 + 5 * 6 + 2 * 6)  # x, the kernel and the product, float32


def test_a_workload_file_and_bad_targets():
    result = solar.analyze(REPO / "data" / "workloads" / "gemm.py")
    assert result.ok and result.rows[0].macs == 1024**3
    assert "# from" in result.ir or "mm" in result.ir
    with pytest.raises(SolarError, match="draws its own inputs"):
        solar.analyze(REPO / "data" / "workloads" / "gemm.py", [1])
    with pytest.raises(SolarError, match="cannot analyse a int"):
        solar.analyze(3, [1])
    with pytest.raises(SolarError, match="unknown hardware"):
        solar.analyze(lambda x: x, [1], hardware="NOPE")


def test_a_live_module_that_does_not_lower_names_the_object_not_a_temporary_file():
    import torch
    import torch.nn as nn

    class Spectrum(nn.Module):
        def forward(self, x):
            return torch.special.airy_ai(x)

    with pytest.raises(SolarError, match="airy") as raised:
        solar.analyze(Spectrum(), [torch.randn(4, 16)])
    (error,) = str(raised.value).splitlines()
    assert error.startswith("<live Spectrum Spectrum>") and "solar_live_" not in error and "(stage: " in error
    (failure,) = raised.value.failures
    assert failure.status == "failed" and failure.stage and "airy" in failure.reason
    assert raised.value.analysis.rows == [] and len(raised.value.analysis.per_op) == 0


def test_a_live_module_over_the_validation_budget_is_validated_node_wise():
    """No scaled-down size of a live object can be made (it has no module constants): node-wise
    validation at its own size takes over, and the row says so."""
    import torch
    import torch.nn as nn

    from solar_assets.sizing import ValidationBudget

    result = solar.analyze(nn.Linear(32, 16), [torch.randn(8, 32)], validation_budget=ValidationBudget(tensor_bytes=64))
    assert not result.errors and result.rows[0].validated_size.startswith("node-wise")
    assert result.rows[0].macs == 8 * 32 * 16


def test_a_live_module_over_every_validation_budget_says_what_to_do(monkeypatch):
    import torch
    import torch.nn as nn

    from solar_assets.sizing import ValidationBudget

    monkeypatch.setenv("SOLAR_NODEWISE_BYTES", "64")  # one forward pass does not fit either
    with pytest.raises(SolarError) as raised:
        solar.analyze(nn.Linear(32, 16), [torch.randn(8, 32)], validation_budget=ValidationBudget(tensor_bytes=64))
    (failure,) = raised.value.failures
    error = failure.reason
    assert failure.stage == "validate"  # node-wise validation is the last resort
    assert error.startswith("<live Linear Linear>") and "SOLAR_VALIDATION_SIZES" in error
    assert "node-wise capture budget" in error and "$SOLAR_NODEWISE_BYTES" in error


def test_errors_behave_one_way(tmp_path, capfd):
    """A wrong input shape, a missing file, a non-target and non-tensor inputs all raise
    ``SolarError`` with one line naming the object or file (and the stage); no framework
    traceback reaches stderr; a directory with one good and one broken file returns, the broken
    one among the failures with its status and reason (issue 26, item 4)."""
    import torch

    from solar_assets.api import AnalysisError

    with pytest.raises(AnalysisError) as raised:
        solar.analyze(torch.nn.Linear(4, 3), [torch.randn(2, 5)], home=tmp_path / "home")
    message = str(raised.value)
    assert message.startswith("<live Linear Linear>: torch.export failed") and "(stage: trace)" in message
    assert len(message.splitlines()) == 1
    err = capfd.readouterr().err
    assert "Traceback" not in err and "failed while attempting to run meta" not in err
    with pytest.raises(SolarError, match="no_such_file"):
        solar.analyze(tmp_path / "no_such_file.py")
    with pytest.raises(SolarError, match="cannot analyse a int"):
        solar.analyze(42, [torch.randn(2)])
    with pytest.raises(SolarError, match="inputs are torch tensors or JAX / NumPy arrays, got str"):
        solar.analyze(lambda x: x, ["text"])
    (tmp_path / "work").mkdir()
    shutil.copy(REPO / "data" / "workloads" / "gemm.py", tmp_path / "work" / "gemm.py")
    (tmp_path / "work" / "broken.py").write_text("import torch\nraise RuntimeError('no model here')\n")
    result = solar.analyze(tmp_path / "work", home=tmp_path / "home")
    assert [r.workload for r in result.rows] == ["gemm"]
    (failure,) = result.failures
    assert (failure.workload, failure.status) == ("broken", "failed") and "no model here" in failure.reason


def test_a_function_over_torch_tensors_takes_the_torch_path():
    import torch

    result = solar.analyze(lambda x: x * 2, [torch.randn(4, 8)], hardware="H100_SXM")
    assert result.ok and result.rows[0].validated
    assert result.rows[0].source == "<live function lambda>"
    (op,) = [r for r in result.per_op if r.op.startswith("aten.mul")]
    assert op.flops == 32 and op.bytes == 2 * 32 * 4
