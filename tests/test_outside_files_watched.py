"""A workload analysed from outside the workload dir is watched by the sensor from then on.

Before: with ``solar ui`` running, an edit to such a file was never seen (the sensor logged "no
new or changed files in <checkout>/data/workloads"): the UI's settings know only that dir, and
the partition ``sized@3f9c2a1e`` named no file they could hash.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg
import pytest

from solar_assets.cli import main

LINEAR = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.tanh(self.fc(x))


batch_size = {batch}
in_features = 12
out_features = 6


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
"""


@pytest.mark.slow
def test_an_edited_outside_file_is_observed_and_its_chain_requested(tmp_path, monkeypatch):
    from solar_assets.asset_compute.keys import workload_key
    from solar_assets.dagster_defs.definitions import build_definitions
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.runner import solar_instance
    from solar_assets.dagster_defs.sensors import source_files
    from solar_assets.paths import REPO_ROOT

    home = tmp_path / "home"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    (tmp_path / "mine").mkdir()
    workload = tmp_path / "mine" / "linear_tanh.py"
    workload.write_text(LINEAR.format(batch=4))
    assert main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress"]) == 0
    key = workload_key(workload, REPO_ROOT / "data" / "workloads")
    assert key == "mine.linear_tanh"  # readable: the directory and the stem

    config = SolarConfig.default(home)  # what `solar ui` runs with: only data/workloads as its dir
    assert config.workload_path(key) == workload.resolve()
    defs = build_definitions(config)
    keys = defs.resolve_asset_graph().get_all_asset_keys()
    with solar_instance(home) as instance:
        def tick():
            return source_files(dg.build_sensor_context(instance=instance, resources={"solar": config}))

        def automation(cursor=None):  # one tick of the re-analysis automation, as the daemon runs it
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
            return result.cursor, {(k.to_user_string(), p) for k in keys for p in result.get_requested_partitions(k)}

        cursor, requested = automation()
        assert requested == set()  # all fresh after the call
        idle = tick()
        assert isinstance(idle, dg.SkipReason) or not idle.run_requests  # nothing changed since the call
        workload.write_text(LINEAR.format(batch=5))
        result = tick()
        assert not isinstance(result, dg.SkipReason), result
        [request] = result.run_requests
        assert request.job_name == "observe_workload_files" and key in request.tags["solar/changed"]
        assert defs.resolve_job_def(request.job_name).execute_in_process(instance=instance).success
        _, requested = automation(cursor)
        assert requested == {("workload_source", key)}  # the edited file's chain starts again, nothing else
