"""The stage chain: run options in one RunConfig, stages that do not re-enter each other, and one
validation step (node-wise included) for the plain path, ``solar coverage`` and the Dagster assets."""
from __future__ import annotations

import textwrap
import warnings

import dagster as dg
import pytest

from solar_assets.dagster_defs.partitions import register_partitions
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.runner import QUIET_LOGGERS, solar_instance
from solar_assets.dagster_defs.sources import SOURCE_ASSETS
from solar_assets.dagster_defs.assets import ASSETS, WORKLOAD_ASSETS
from solar_assets.chain import RunConfig, stages
from solar_assets.asset_compute.plain import analyze_workload
from solar_assets.coverage.workload import check_workload
from solar_assets.sizing import ValidationBudget
from solar_assets.validate.nodewise import LABEL

# A hard-coded 64x64 input (not a size constant) and a batch below the scalable sizes: no
# scaled-down size brings it under a 16 KiB budget, so it is validated node-wise.
FLAT_PROJECTION = textwrap.dedent('''
    import torch
    import torch.nn as nn

    batch_size = 2
    features = 8


    class Model(nn.Module):
        def __init__(self, features):
            super().__init__()
            self.proj = nn.Linear(64 * 64, features)

        def forward(self, x):
            return torch.relu(self.proj(torch.flatten(x, 1)))


    def get_inputs():
        return [torch.randn(batch_size, 64, 64)]


    def get_init_inputs():
        return [features]
''')
SMALL_BUDGET = ValidationBudget(tensor_bytes=16 << 10)

SCALE = textwrap.dedent('''
    import torch
    import torch.nn as nn

    n = 6


    class Model(nn.Module):
        def forward(self, a, b):
            return a * b + a


    def get_inputs():
        return [torch.randn(n, n), torch.randn(n, n)]


    def get_init_inputs():
        return []
''')


def test_run_config_explicit_then_environment_then_defaults():
    env = {"SOLAR_TRANSLATOR": " auto ", "SOLAR_FP32_MATH": "ieee", "SOLAR_NODEWISE_BYTES": "1e6",
           "SOLAR_FRAMEWORK": "jax"}
    from_env = RunConfig.from_env(env)
    assert (from_env.translator, from_env.fp32_math, from_env.nodewise_bytes, from_env.framework) == \
        ("auto", "ieee", 1_000_000, "jax")
    explicit = RunConfig.from_env(env, translator="tracer", fp32_math="tf32", nodewise_bytes=5)
    assert (explicit.translator, explicit.fp32_math, explicit.nodewise_bytes) == ("tracer", "tf32", 5)
    default = RunConfig.from_env({"SOLAR_TRANSLATOR": "", "SOLAR_FRAMEWORK": ""})
    assert default == RunConfig() and default.nodewise_bytes == 4 << 30 and default.framework is None
    assert RunConfig.from_env(from_env.to_env()) == from_env  # what solar exports, a worker reads back


def test_the_dagster_resource_carries_the_run_config(tmp_path, monkeypatch):
    config = RunConfig(translator="auto", fp32_math="ieee", validation_budget=SMALL_BUDGET, nodewise_bytes=123)
    assert SolarConfig.default(tmp_path, run=config).run_config == config
    monkeypatch.setenv("SOLAR_FP32_MATH", "tf32")
    monkeypatch.delenv("SOLAR_TRANSLATOR", raising=False)
    assert SolarConfig.default(tmp_path).run_config == RunConfig(fp32_math="tf32")


def test_golden_and_validation_do_not_trace(tmp_path, monkeypatch):
    """The golden stage runs the framework and validation runs the IR it is given: neither calls
    the translator (before the split both re-traced)."""
    path = tmp_path / "scale.py"
    path.write_text(SCALE)
    config = RunConfig()
    src = stages.read_source(path, config)
    translation = stages.translate(src, config)

    def no_tracing(*args, **kwargs):
        raise AssertionError("a stage re-entered the translator")

    monkeypatch.setattr(stages, "translate", no_tracing)
    golden = stages.golden(src, {})
    validated = stages.validate(src, translation, golden)
    assert validated.result.ok and validated.validated_size == "full"
    assert stages.retrace(src, translation, {}) is None  # full size: nothing to trace again


@pytest.fixture(scope="module")
def flat_projection(tmp_path_factory):
    directory = tmp_path_factory.mktemp("flat")
    path = directory / "flat_projection.py"
    path.write_text(FLAT_PROJECTION)
    return path


def test_plain_chain_and_coverage_validate_node_wise_alike(flat_projection, tmp_path):
    config = RunConfig(validation_budget=SMALL_BUDGET)
    result = analyze_workload(flat_projection, ["H100_SXM"], config=config, cache_dir=tmp_path, cache_aware=False)
    assert result.error is None, result.error
    assert result.validated_size == LABEL and [r.validated_size for r in result.rows] == [LABEL]
    assert result.rows[0].macs == 2 * 64 * 64 * 8  # batch × in-features × out-features
    row = check_workload(flat_projection, tmp_path, config=config)
    assert (row.translated, row.validated, row.validated_size, row.failed_stage) == (True, True, LABEL, None)


@pytest.mark.slow
def test_dagster_ir_validation_falls_back_to_node_wise(flat_projection, tmp_path, monkeypatch):
    from solar_assets.dagster_defs.definitions import resources_for

    monkeypatch.setenv("SOLAR_HOME", str(tmp_path))
    config = SolarConfig.default(tmp_path, workload_dir=flat_projection.parent,
                                 run=RunConfig(validation_budget=SMALL_BUDGET))
    with solar_instance(tmp_path) as instance:
        register_partitions(instance, ["flat_projection"], ["H100_SXM"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dg.BetaWarning)
            run = dg.materialize([*SOURCE_ASSETS, *ASSETS], selection=list(WORKLOAD_ASSETS),
                                 partition_key="flat_projection", instance=instance, resources=resources_for(config),
                                 run_config=QUIET_LOGGERS, raise_on_error=False)
        assert run.success, run.get_step_failure_events()
    assert run.output_for_node("golden_outputs") is None  # no size fits: no golden run at one size
    validation = run.asset_materializations_for_node("ir_validation")[0].metadata
    assert validation["validation size"].value == LABEL and validation["verdict"].value == "pass"
    assert run.output_for_node("ir_validation").validated_size == LABEL
    assert run.asset_materializations_for_node("einsum_graph")[0].metadata["MACs"].value == 2 * 64 * 64 * 8


# The projection with a batch that scales: its 4096-wide weight does not, so every scaled size is
# over a 16 KiB whole-program budget, and one pass at the file's own size over a 4 MiB capture
# budget, while one pass at a scaled batch fits it.
WIDE_BATCH = FLAT_PROJECTION.replace("batch_size = 2\n", "batch_size = 1024\n")
assert WIDE_BATCH != FLAT_PROJECTION


def test_node_wise_at_a_scaled_size_where_the_file_s_own_size_is_over_the_capture_budget(tmp_path):
    path = tmp_path / "wide_batch.py"
    path.write_text(WIDE_BATCH)
    config = RunConfig(validation_budget=SMALL_BUDGET, nodewise_bytes=4 << 20)
    result = analyze_workload(path, ["H100_SXM"], config=config, cache_dir=tmp_path, cache_aware=False)
    assert result.error is None, result.error
    assert result.validated_size.startswith(f"{LABEL} at batch_size=")
    scaled_batch = int(result.validated_size.rsplit("=", 1)[1])
    assert 2 <= scaled_batch < 1024
    assert result.rows[0].macs == 1024 * 64 * 64 * 8  # the bounds stay the file's own size
    row = check_workload(path, tmp_path, config=config)  # coverage: the same verdict, from the cache too
    assert (row.validated, row.validated_size) == (True, result.validated_size)


def test_no_pass_that_fits_the_capture_budget_names_both_sizes(tmp_path):
    path = tmp_path / "wide_batch.py"
    path.write_text(WIDE_BATCH)
    config = RunConfig(validation_budget=SMALL_BUDGET, nodewise_bytes=64 << 10)
    result = analyze_workload(path, ["H100_SXM"], config=config, cache_dir=tmp_path, cache_aware=False)
    assert result.failed_stage == "validate" or result.failed_stage == "size", result.failed_stage
    first = result.error.splitlines()[0]
    assert str(path) in first and "at the file's own size needs" in first and "at batch_size=" in first
    assert "node-wise capture budget" in first


def test_a_pass_refused_as_too_big_is_not_exported_again(tmp_path, monkeypatch):
    """Validated again (a new verdict key is not needed: the same IR), the full-size pass the capture
    budget refused is refused from the cache and the scaled verdict is the cached one: no export."""
    from solar_assets.validate import nodewise

    path = tmp_path / "wide_batch.py"
    path.write_text(WIDE_BATCH)
    config = RunConfig(validation_budget=SMALL_BUDGET, nodewise_bytes=4 << 20)
    src = stages.read_source(path, config)
    translation = stages.translate(src, config, tmp_path)
    choice = stages.choose_size_or_nodewise(src, translation, config, tmp_path)
    first = stages.validate_nodewise(src, translation, choice, config, tmp_path)
    assert first.validated_size.startswith(f"{LABEL} at batch_size=")

    def no_pass(*args, **kwargs):
        raise AssertionError("node-wise validation ran a pass again")

    monkeypatch.setattr(nodewise, "validate_nodewise", no_pass)
    again = stages.validate_nodewise(src, translation, choice, config, tmp_path)
    assert again.validated_size == first.validated_size and again.result.ok
