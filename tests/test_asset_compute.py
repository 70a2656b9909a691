"""The asset functions without Dagster (``solar_assets.asset_compute``): the graph they declare is
Dagster's, and a worker computes a file's partitions without importing Dagster (that it computes
what Dagster's own step computes: tests/test_dagster_call.py)."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from solar_assets.asset_compute.graph import NODES
from solar_assets.asset_compute.settings import FIELDS
from workload_texts import TINY_LINEAR_RELU as WORKLOAD

ROOT = Path(__file__).resolve().parents[1]



MATMUL = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """One matrix product."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


m = 64
k = 32
n = 48


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
'''


def test_the_plain_graph_is_the_dagster_graph():
    import dagster as dg

    from solar_assets.dagster_defs.assets import ASSETS
    from solar_assets.dagster_defs.partitions import hardware_partitions, workload_on_hardware, workload_partitions

    by_name = {a.key.path[-1]: a for a in ASSETS}
    kinds = {"workload": workload_partitions, "hardware": hardware_partitions, "pair": workload_on_hardware}
    for name, node in NODES.items():
        asset = by_name[name]
        parents = {k.path[-1] for k in asset.dependency_keys}
        assert parents == {*node.inputs, *node.sources}, name
        handed = {n: k.path[-1] for n, k in asset.keys_by_input_name.items() if n in NODES}
        assert handed == {n: n for n in node.inputs}, name  # what the step hands over
        assert asset.partitions_def is kinds[node.partitioning], name
        assert asset.code_versions_by_key[asset.key] == node.code_version, name
    assert isinstance(by_name["sol_bounds"].partitions_def, dg.MultiPartitionsDefinition)


def test_the_settings_have_the_resources_fields():
    from solar_assets.dagster_defs.resources import SolarConfig

    assert set(FIELDS) == set(SolarConfig.model_fields)
    config = SolarConfig.default("/tmp/solar-home-x")
    assert dataclasses.asdict(config.settings) == {name: getattr(config, name) for name in FIELDS}


PROBE = textwrap.dedent("""
    import json, sys, tempfile
    from solar_assets.asset_compute.settings import AssetSettings
    from solar_assets.asset_compute.storage import read_events
    from solar_assets.asset_compute.worker import compute_workload, events_file
    home, path = sys.argv[1], sys.argv[2]
    settings = AssetSettings.default(home, workload_files={"w": path})
    with tempfile.TemporaryDirectory() as call_dir:
        result = compute_workload(path, None, {"settings": settings.as_dict(), "keys": {path: "w"},
                                               "hardware": ["H100_SXM"], "inverse": False, "call_dir": call_dir,
                                               "defer_pictures": True})
        events = read_events(events_file(call_dir, path))
    print(json.dumps({"error": result.error, "dagster": sorted(m for m in sys.modules if m.split(".")[0] == "dagster"),
                      "events": {e.partition.asset: e.data_version for e in events},
                      "pictures": sorted(k for e in events for k in e.metadata if k in ("graph", "roofline"))}))
""")


@pytest.mark.slow
def test_a_worker_computes_without_dagster_what_a_dagster_step_computes(tmp_path):
    import json

    path = tmp_path / "relu_linear.py"
    path.write_text(WORKLOAD)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOLAR_HOME": str(tmp_path / "plain")}
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "plain"), str(path)], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    done = json.loads(out.stdout.strip().splitlines()[-1])
    assert done["error"] is None and done["dagster"] == []
    assert done["pictures"] == []  # deferred: the CLI draws them (asset_compute.pictures)
    assert set(done["events"]) == {"workload_source", "golden_outputs", "ir_translation", "ir_validation",
                                   "einsum_graph", "cache_aware_bound", "sol_bounds"}  # no on-demand ski_slope
    # the same data versions as Dagster's own steps: tests/test_dagster_call.py (after a CLI call)


@pytest.mark.slow
def test_the_dagster_path_honours_the_run_options(tmp_path):
    """``--fp32-math tf32`` reaches the Dagster path's worker (it once got only the paths and
    bounded with the default policy): an fp32 matmul is bounded at the spec's TF32 tensor-core peak,
    on both paths alike."""
    import json

    import yaml

    tf32 = float(yaml.safe_load((ROOT / "hardware" / "H100_SXM.yaml").read_text())["peak_flop_per_s"]["matrix"]["tf32"])
    path = tmp_path / "matmul.py"
    path.write_text(MATMUL)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows = {}
    for flag in ([], ["--no-dagster"]):
        out = subprocess.run([sys.executable, "-m", "solar", "analyze", str(path), "--hardware", "H100_SXM",
                              "--fp32-math", "tf32", "--json", "--no-progress", "--home", str(tmp_path / "home"),
                              *flag], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        rows[bool(flag)] = json.loads(out.stdout)["rows"][0]
    assert rows[False]["peak_flop_per_s"] == pytest.approx(tf32)
    assert rows[False]["sol_fused_s"] == pytest.approx(rows[True]["sol_fused_s"])


@pytest.mark.slow
def test_two_workers_on_the_dagster_path_give_the_plain_rows(tmp_path):
    """``solar analyze --jobs 2`` runs two workers on the Dagster path too (the worker imports no
    Dagster, and each file's events are its own file); the rows are the plain path's."""
    import json

    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "relu_linear.py").write_text(WORKLOAD)
    (folder / "matmul.py").write_text(MATMUL)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows = {}
    for flag in (["--jobs", "2"], ["--no-dagster"]):
        out = subprocess.run([sys.executable, "-m", "solar", "analyze", str(folder), "--hardware", "H100_SXM",
                              "--json", "--no-progress", "--home", str(tmp_path / "home"), *flag],
                             capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        rows[flag[0]] = {r["workload"]: (r["macs"], r["sol_fused_s"], r["bytes_fused"])
                         for r in json.loads(out.stdout)["rows"]}
    assert rows["--jobs"] == rows["--no-dagster"]
    assert rows["--jobs"]["matmul"][0] == 64 * 32 * 48  # MACs of the product, by hand
