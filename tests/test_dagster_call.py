"""``solar analyze`` on Dagster is one run per call, and records what per-partition runs would.

Two tiny workloads and a broken one, on copies of A6000 and H100_SXM: one call of
``analyze_with_dagster`` (workers compute, one run records). Then, on that instance:
- exactly one run exists, and every asset partition of the good workloads was materialised in it;
  the broken file's ``workload_source`` has a failure event naming the file, its downstream assets
  "upstream failed", and nothing of it was materialised;
- nothing is stale; a regular ``dg.materialize`` of one pair afterwards (Dagster's own step)
  writes the same data versions the call recorded;
- editing one figure of A6000.yaml and re-analysing runs exactly ``hardware_spec[A6000]``, the
  two good workloads' ``sol_bounds`` and ``cache_aware_bound`` on A6000, and the report.
"""
from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path

import dagster as dg
import pytest
from dagster_helpers import call_tree
from workload_texts import BMM_PAIR, TANH_LINEAR

from solar_assets.dagster_defs.partitions import workload_hardware_key, workload_key

pytestmark = pytest.mark.slow  # one worker through torch for three files, then a re-analysis

REPO = Path(__file__).resolve().parents[1]
HARDWARE = ["A6000", "H100_SXM"]
GOOD = {
    "small_fc": TANH_LINEAR.format(batch=4),
    "small_bmm": BMM_PAIR,
}
BROKEN = "class Model(:\n"  # a syntax error: workload_source fails, naming the file


def _pair(workload_file: Path, hardware: str) -> str:
    return str(workload_hardware_key(workload_key(workload_file, REPO / "data" / "workloads"), hardware))


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    root = tmp_path_factory.mktemp("call")
    hardware_dir, workloads, home = call_tree(root, HARDWARE)
    files = []
    for name, text in {**GOOD, "broken_one": BROKEN}.items():
        (workloads / f"{name}.py").write_text(text)
        files.append(workloads / f"{name}.py")
    patch = pytest.MonkeyPatch()
    patch.setenv("SOLAR_HARDWARE_DIR", str(hardware_dir))
    from solar_assets.dagster_defs.runner import analyze_with_dagster, solar_instance

    results, rows = analyze_with_dagster([str(f) for f in files], HARDWARE, home=home, timeout_s=600)
    instance = solar_instance(home)
    yield {"files": files, "results": results, "rows": rows, "instance": instance, "home": home,
           "hardware_dir": hardware_dir}
    instance.dispose()
    patch.undo()


def _config(analysed):
    from solar_assets.dagster_defs.resources import SolarConfig

    base = SolarConfig.default(analysed["home"])
    return base.model_copy(update={"workload_files": {workload_key(f, base.workload_dir): str(f)
                                                      for f in analysed["files"]}})

def test_the_worker_returns_each_pairs_per_op_rows_as_lifting_the_cached_ir_gives(analysed):
    """``per_op.csv`` of a Dagster call comes from the worker (no re-lift in the CLI); the rows
    equal the ones the CLI's fallback computes independently from the cached IR. First in the
    file: a later test edits a hardware spec."""
    import dataclasses

    from solar_assets.cli import _per_op_of

    bounded = [r for r in analysed["results"] if r.ok and r.rows]
    assert {Path(r.path).stem for r in bounded} == {"small_fc", "small_bmm"}
    for result in bounded:
        assert {o.hardware for o in result.per_op} == set(HARDWARE)
        lifted = _per_op_of([dataclasses.replace(result, per_op=[])], analysed["home"])
        assert sorted(map(repr, result.per_op)) == sorted(map(repr, lifted))



def test_one_run_materialises_every_partition_and_fails_only_the_broken_file(analysed):
    instance, files = analysed["instance"], analysed["files"]
    good, broken = files[:2], files[2]
    errors = {Path(r.path).stem: r.error for r in analysed["results"]}
    assert errors["small_fc"] is None and errors["small_bmm"] is None
    assert "broken_one.py" in errors["broken_one"]
    assert sorted((r.workload, r.hardware) for r in analysed["rows"]) == \
        sorted((Path(f).stem, h) for f in good for h in HARDWARE)
    runs = {r.job_name: r for r in instance.get_runs()}
    assert len(instance.get_runs()) == 2 and set(runs) == {"solar_analyze", "__ephemeral_asset_job__"}
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs.values())

    def materialised_in(run) -> set[tuple[str, str | None, str]]:
        return {(r.event_log_entry.dagster_event.asset_key.to_user_string(), r.event_log_entry.dagster_event.partition,
                 r.event_log_entry.step_key)
                for r in instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records}

    # every partition of the good files from the call's one step, which ran the workers
    expected = {("hardware_spec", h) for h in HARDWARE}
    for f in good:
        key = workload_key(f, REPO / "data" / "workloads")
        expected |= {(a, key) for a in ("workload_source", "golden_outputs", "ir_translation", "ir_validation",
                                        "einsum_graph")}  # ski_slope: only with --ski-slope
        expected |= {(a, _pair(f, h)) for a in ("cache_aware_bound", "sol_bounds") for h in HARDWARE}
    assert materialised_in(runs["solar_analyze"]) == {(a, p, "analyse_workloads") for a, p in expected}
    assert materialised_in(runs["__ephemeral_asset_job__"]) == {("headroom_report", None, "headroom_report")}
    # the broken file: nothing of it materialised, and its one-line error in the step's log
    broken_key = workload_key(broken, REPO / "data" / "workloads")
    assert not any(p == broken_key for _, p, _ in materialised_in(runs["solar_analyze"]))
    errors = [e.user_message for e in instance.all_logs(runs["solar_analyze"].run_id)
              if e.level >= logging.ERROR and e.step_key == "analyse_workloads"]
    assert len(errors) == 1 and "broken_one.py" in errors[0], errors


def test_nothing_is_stale_and_a_regular_run_writes_the_same_data_versions(analysed):
    from solar_assets.dagster_defs.automation import stale_partitions
    from solar_assets.dagster_defs.runner import QUIET_LOGGERS
    from solar_assets.dagster_defs.sources import SOURCE_ASSETS
    from solar_assets.dagster_defs.assets import ASSETS
    from solar_assets.dagster_defs.definitions import build_definitions, resources_for

    instance, config = analysed["instance"], _config(analysed)
    graph = build_definitions(config)
    assert stale_partitions(instance, graph) == {}
    pair = _pair(analysed["files"][0], "A6000")
    keys = [dg.AssetKey(a) for a in ("cache_aware_bound", "sol_bounds")]

    def versions() -> dict[str, str]:
        out = {}
        for key in keys:
            record = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key, asset_partitions=[pair]),
                                                     limit=1).records[0]
            out[key.path[-1]] = record.asset_materialization.tags["dagster/data_version"]
        return out

    recorded = versions()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        multi = workload_hardware_key(workload_key(analysed["files"][0], REPO / "data" / "workloads"), "A6000")
        run = dg.materialize([*SOURCE_ASSETS, *ASSETS], selection=keys, partition_key=multi, instance=instance,
                             resources=resources_for(config), run_config=QUIET_LOGGERS, raise_on_error=False)
    assert run.success
    assert versions() == recorded
    assert stale_partitions(instance, graph) == {}


def test_a_hardware_edit_reanalyses_exactly_that_parts_bound_partitions(analysed):
    from dagster_helpers import dagster_stale
    from solar_assets.dagster_defs.automation import reanalyse, stale_partitions
    from solar_assets.dagster_defs.sources import observe_sources
    from solar_assets.dagster_defs.definitions import build_definitions

    instance, config = analysed["instance"], _config(analysed)
    spec = analysed["hardware_dir"] / "A6000.yaml"
    text, count = re.subn(r"^(dram_bytes_per_s:\s*)([0-9.eE+]+)", lambda m: f"{m[1]}{float(m[2]) * 0.5:.6g}",
                          spec.read_text(), count=1, flags=re.M)
    assert count == 1
    spec.write_text(text)
    observe_sources(instance, config)
    defs = build_definitions(config)
    stale = stale_partitions(instance, defs)
    assert stale == {dg.AssetKey("hardware_spec"): ["A6000"]} == dagster_stale(instance, defs)  # Dagster's verdict
    ran = reanalyse(instance, defs)
    good = analysed["files"][:2]
    assert sorted(ran, key=str) == sorted(
        [("hardware_spec", "A6000"), ("headroom_report", None)]
        + [(a, _pair(f, "A6000")) for a in ("cache_aware_bound", "sol_bounds") for f in good], key=str)

