"""The limits of ``solar analyze``'s workers hold on Dagster's own path too (issue 32, item 3): a
run launched as the UI, the sensor or the sweep launch it (``dg.materialize`` of the assets,
Dagster's in-process executor here, the strictest case: the step shares the run's process) runs
the steps that execute the user's file in a worker — time and memory limits, state restored,
output captured — so a sleeper, a memory hog or a float64 default costs only its own step."""
from __future__ import annotations

import dagster as dg
import pytest
import torch

from dagster_helpers import call_tree, materialize
from test_isolation import FLOAT64_DEFAULT, MEMORY_HOG, PRINTER, SLEEPER

pytestmark = pytest.mark.slow  # each step that runs workload code starts a worker (torch, numba)

CHAIN = ["workload_source", "ir_translation", "golden_outputs", "ir_validation"]


def _setup(tmp_path, files: dict[str, str], **limits):
    from solar_assets.dagster_defs.partitions import register_partitions
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.runner import solar_instance

    hardware_dir, workloads, home = call_tree(tmp_path, ["H100_SXM"])
    for name, text in files.items():
        (workloads / f"{name}.py").write_text(text)
    config = SolarConfig(**{**SolarConfig.default(home, workloads).model_dump(), "hardware_dir": str(hardware_dir),
                            **limits})
    instance = solar_instance(home)
    register_partitions(instance, list(files), ["H100_SXM"])
    return instance, config


def _failure(result: dg.ExecuteInProcessResult, step: str) -> str:
    events = [e for e in result.all_events if e.is_step_failure and e.step_key == step]
    assert events, f"{step} did not fail"
    return events[0].step_failure_data.error.message


def test_a_sleeper_and_a_memory_hog_fail_their_own_step_within_the_limits(tmp_path):
    instance, config = _setup(tmp_path, {"sleeper": SLEEPER, "hog": MEMORY_HOG},
                              step_timeout_s=20.0, step_memory_limit="1G")
    sleeper = materialize(instance, config, [dg.AssetKey(a) for a in CHAIN], partition_key="sleeper")
    assert not sleeper.success
    message = _failure(sleeper, "ir_translation")
    assert "sleeper.py" in message and "timed out after 20 s during trace" in message
    assert "\n" not in message.strip()  # one line
    hog = materialize(instance, config, [dg.AssetKey(a) for a in CHAIN], partition_key="hog")
    message = _failure(hog, "ir_translation")
    assert "hog.py" in message and "memory limit" in message


def test_a_steps_state_changes_and_prints_stay_in_its_worker(tmp_path, capfd):
    instance, config = _setup(tmp_path, {"float64": FLOAT64_DEFAULT, "printer": PRINTER})
    before = torch.get_default_dtype()
    changed = materialize(instance, config, [dg.AssetKey(a) for a in CHAIN], partition_key="float64")
    if not changed.success:  # a file may break itself (the tamper check distrusts it), never the run's process
        assert "float64.py" in _failure(changed, "ir_translation")
    assert torch.get_default_dtype() == before
    printer = materialize(instance, config, [dg.AssetKey(a) for a in CHAIN], partition_key="printer")
    assert printer.success and printer.output_for_node("ir_validation").result.ok
    assert torch.get_default_dtype() == before
    out, _ = capfd.readouterr()
    assert "hello from the workload" not in out and "a C library writes to fd 1" not in out
