"""JAX / Flax workload files: framework detection, the loader's bindings, golden outputs, the
pipeline end to end, validation-size rebinding, XLA's cost analysis, and the shipped MLA pair."""
from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import numpy as np
import pytest

from solar_assets import pipeline
from solar_assets.coverage import check_workload, format_coverage
from solar_assets.coverage.xla_reference import xla_cost
from solar_assets.errors import SolarError
from solar_assets.graph import build_einsum_graph
from solar_assets.translate.jax_tracer import trace_jax
from solar_assets.workloads import read_workload_source
from solar_assets.workloads.jax_loader import load_jax_workload
from solar_assets.workloads.source import detect_framework

WORKLOADS = Path(__file__).resolve().parents[1] / "data" / "workloads"

LINEN = """\
import jax
import jax.numpy as jnp
from flax import linen as nn

BATCH = 16
DIM = 12


class Model(nn.Module):
    out: int

    @nn.compact
    def __call__(self, x):
        return jnp.tanh(nn.Dense(self.out)(nn.LayerNorm()(x)))


def get_inputs():
    return [jax.random.normal(jax.random.key(0), (BATCH, DIM))]


def get_init_inputs():
    return [5]
"""

NNX = """\
import jax
from flax import nnx


class Model(nnx.Module):
    def __init__(self, d, *, rngs):
        self.fc = nnx.Linear(d, 3, rngs=rngs)

    def __call__(self, x):
        return jax.nn.relu(self.fc(x))


def get_inputs():
    return [jax.random.normal(jax.random.key(1), (4, 6))]


def get_init_inputs():
    return [6]
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def test_framework_detection():
    assert detect_framework("import jax\ndef forward(x): return x\n") == "jax"
    assert detect_framework("from flax import linen as nn\nclass Model(nn.Module): pass\n") == "jax"
    assert detect_framework("import torch\nclass Model(torch.nn.Module): pass\n") == "torch"
    # both imported: the convention decides
    assert detect_framework("import torch, jax\ndef forward(x): return x\n") == "jax"
    assert detect_framework("import torch, jax\nclass Model: pass\ndef get_init_inputs(): pass\n") == "torch"
    assert detect_framework("x = 1\n") == "unknown"
    for path in sorted(WORKLOADS.glob("*.py")):
        expected = "jax" if path.stem.startswith("jax_") else "torch"
        assert read_workload_source(path).framework == expected, path


def test_framework_named_explicitly(tmp_path):
    path = _write(tmp_path, "plain", "import numpy\n")
    assert read_workload_source(path, "jax").framework == "jax"
    with pytest.raises(SolarError, match="unknown framework 'tf'"):
        read_workload_source(path, "tf")
    with pytest.raises(SolarError, match="neither a PyTorch nor a JAX workload"):
        pipeline.read_source(path)


def test_linen_parameters_are_weights_bound_by_path(tmp_path):
    src = read_workload_source(_write(tmp_path, "linen_small", LINEN))
    w = load_jax_workload(src, abstract=True)
    assert w.kind == "linen"
    assert sorted(w.params) == ["param:Dense_0.bias", "param:Dense_0.kernel", "param:LayerNorm_0.bias",
                                "param:LayerNorm_0.scale"]
    assert w.params["param:Dense_0.kernel"].shape == (12, 5)
    program = trace_jax(src).program
    weights = {t.binding: t.shape for t in program.tensors if t.role == "weight"}
    assert weights["param:Dense_0.kernel"] == (12, 5)
    assert [t.binding for t in program.tensors if t.role == "input"] == ["input:0"]


def test_nnx_pipeline_end_to_end(tmp_path):
    src = pipeline.read_source(_write(tmp_path, "nnx_small", NNX))
    translation = pipeline.translate_source(src)
    golden = pipeline.golden_for(src, None, {})
    assert set(golden.params) == {"param:fc.kernel", "param:fc.bias"}
    assert golden.outputs[0].dtype == np.float32 and golden.outputs64[0].dtype == np.float64
    validated = pipeline.validate_translation(src, translation, golden)
    assert validated.result.ok
    assert build_einsum_graph(validated.program).macs == 4 * 6 * 3


def test_linen_validates_at_a_rebound_size(tmp_path):
    """Module-level size constants rebind for JAX files as for PyTorch ones."""
    src = pipeline.read_source(_write(tmp_path, "linen_rebind", LINEN))
    full = pipeline.translate_source(src)
    golden = pipeline.golden_for(src, None, {"BATCH": 3})
    assert golden.inputs[0].shape == (3, 12) and golden.size_label == "BATCH=3"
    validated = pipeline.validate_translation(src, full, golden)
    assert validated.result.ok and validated.validated_size == "BATCH=3"
    assert validated.program.tensor(validated.program.inputs[0]).shape == (16, 12)  # analysed at full size


def test_closed_over_array_constant_is_a_weight(tmp_path):
    src = pipeline.read_source(_write(tmp_path, "closure", """\
        import jax
        import numpy as np

        MASK = np.tril(np.ones((5, 5), np.float32)) * 0.5

        def get_inputs():
            return [jax.random.normal(jax.random.key(0), (5, 5))]

        def forward(x):
            return x * MASK + 1.0
        """))
    translation = pipeline.translate_source(src)
    assert [t.binding for t in translation.program.tensors if t.role == "weight"] == ["const:0"]
    golden = pipeline.golden_for(src, None, {})
    np.testing.assert_array_equal(golden.params["const:0"], np.tril(np.ones((5, 5), np.float32)) * 0.5)
    assert pipeline.validate_translation(src, translation, golden).result.ok


def test_missing_forward_is_named(tmp_path):
    src = read_workload_source(_write(tmp_path, "no_forward", "import jax\ndef get_inputs():\n    return []\n"))
    with pytest.raises(SolarError, match="missing forward"):
        trace_jax(src)


def test_xla_cost_and_solar_agree_on_a_matmul(tmp_path):
    path = _write(tmp_path, "matmul", """\
        import jax

        def get_inputs():
            k = jax.random.split(jax.random.key(0))
            return [jax.random.normal(k[0], (32, 48)), jax.random.normal(k[1], (48, 16))]

        def forward(a, b):
            return a @ b
        """)
    cost = xla_cost(path)
    graph = build_einsum_graph(trace_jax(read_workload_source(path)).program)
    assert graph.flops == cost.flops == 2 * 32 * 48 * 16
    assert cost.bytes_accessed == graph.bytes_unfused == 4 * (32 * 48 + 48 * 16 + 32 * 16)


def test_coverage_row_has_xla_ratios(tmp_path):
    path = _write(tmp_path, "nnx_cov", NNX)
    row = check_workload(path, None)
    assert row.validated and row.framework == "jax", row.error
    assert row.solar_flops > 0 and row.xla_flops > 0 and row.xla_flops_ratio == row.solar_flops / row.xla_flops
    header, _, line = format_coverage([row]).splitlines()[:3]
    assert "FLOPs/XLA" in header and "bytes/XLA" in header
    assert f"{row.xla_flops_ratio:.3g}" in line


def test_coverage_names_an_unlowered_primitive(tmp_path):
    path = _write(tmp_path, "jax_shift", """\
        import jax
        import jax.numpy as jnp

        def get_inputs():
            return [jnp.arange(3, dtype=jnp.int32)]

        def forward(x):
            return jnp.left_shift(x, 2)
        """)
    row = check_workload(path, None)
    assert (row.translated, row.failed_stage, row.unlowered_op) == (False, "trace", "shift_left"), row.error
    assert f"{path.name}:8" in row.error


def test_cli_framework_option(tmp_path, monkeypatch, capsys):
    from solar_assets.cli import main

    monkeypatch.setenv("SOLAR_FRAMEWORK", "")  # main() sets it; monkeypatch removes it after the test
    path = _write(tmp_path, "jax_by_name", NNX)
    assert main(["coverage", str(path), "--framework", "jax", "--jobs", "0", "--home", str(tmp_path / "home"),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "coverage: 1/1 translated, 1/1 validated"


def _constants(path: Path) -> dict:
    spec = importlib.util.spec_from_file_location(path.stem + "_constants", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {k: v for k, v in vars(module).items() if k.isupper()}


def test_mla_absorbed_order_cuts_the_macs():
    """The two MLA files compute the same function; the absorbed order never up-projects the cache."""
    naive_path, absorbed_path = WORKLOADS / "jax_mla_naive.py", WORKLOADS / "jax_mla_absorbed.py"
    c = _constants(naive_path)
    assert c == _constants(absorbed_path)
    b, q, s, d, h, e, r = (c[k] for k in ("BATCH", "QUERY", "CACHE", "DIM", "HEADS", "HEAD_DIM", "LATENT"))
    naive = build_einsum_graph(trace_jax(read_workload_source(naive_path)).program).macs
    absorbed = build_einsum_graph(trace_jax(read_workload_source(absorbed_path)).program).macs
    assert naive == b * q * d * h * e + 2 * b * s * r * h * e + 2 * b * h * q * s * e + b * q * h * e * d
    assert absorbed == b * q * d * h * e + b * q * h * e * r + 2 * b * h * q * s * r + b * q * h * r * e + b * q * h * e * d
    assert naive > 10 * absorbed
    # and they are the same function
    wn, wa = (load_jax_workload(read_workload_source(p)) for p in (naive_path, absorbed_path))
    np.testing.assert_allclose(np.asarray(wn.fn({}, *wn.inputs)), np.asarray(wa.fn({}, *wa.inputs)), rtol=1e-4,
                               atol=1e-5)
