"""Dagster as the spine: discovery, change propagation and checks, proven by counting what runs.

Two tiny workloads and two hardware specs (copies of H100_SXM and A6000) in temp dirs, a temp
Dagster instance; everything is materialised once, then:
- editing one figure of A6000.yaml re-runs ``hardware_spec[A6000]``, then the bounds of A6000
  only, then the report; a comment-only edit stops at ``hardware_spec``;
- editing one workload re-runs that workload's chain only;
- the nightly schedule's sweep re-materialises exactly what an edit made stale;
- a bad bounds table fails the great-expectations asset check with a readable description.
Each re-analysis tick is ``dg.evaluate_automation_conditions``; the test materialises what a tick
requests (as the daemon would) and asserts the exact (asset, partition) set, tick by tick.
"""
from __future__ import annotations

import shutil
import warnings
from collections import defaultdict
from pathlib import Path

import dagster as dg
import pytest

from solar_assets.dagster_defs.partitions import workload_hardware_key
from solar_assets.dagster_defs.resources import SolarConfig
from solar_assets.dagster_defs.runner import QUIET_LOGGERS
from solar_assets.dagster_defs.sources import SOURCE_ASSETS
from solar_assets.dagster_defs.assets import ASSETS, BOUND_ASSETS, WORKLOAD_ASSETS, hardware_spec, headroom_report

pytestmark = pytest.mark.slow  # a few minutes: two workloads through torch, ~20 automation ticks

REPO = Path(__file__).resolve().parents[1]
HARDWARE = ("A6000", "H100_SXM")
WORKLOADS = {
    "tiny_linear": '''import torch
import torch.nn as nn

N_OUT = 8


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return [16, N_OUT]
''',
    "tiny_matmul": '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(8, 12), torch.randn(12, 6)]


def get_init_inputs():
    return []
''',
}
WORKLOAD_CHAIN = ("workload_source", "golden_outputs", "ir_translation", "ir_validation", "einsum_graph", "ski_slope")
PAIR_ASSETS = ("cache_aware_bound", "inverse_roofline", "sol_bounds")


class Spine:
    """The temp dirs, instance and definitions, with helpers that act as the daemon would."""

    def __init__(self, root: Path):
        from solar_assets.dagster_defs.definitions import build_definitions, resources_for

        self.workload_dir, self.hardware_dir, self.home = root / "workloads", root / "hardware", root / "home"
        for d in (self.workload_dir, self.hardware_dir, self.home):
            d.mkdir()
        for name, text in WORKLOADS.items():
            (self.workload_dir / f"{name}.py").write_text(text)
        for name in HARDWARE:
            shutil.copy(REPO / "hardware" / f"{name}.yaml", self.hardware_dir / f"{name}.yaml")
        self.config = SolarConfig(home=str(self.home), workload_dir=str(self.workload_dir),
                                  hardware_dir=str(self.hardware_dir))
        self.defs = build_definitions(self.config)
        self.resources = resources_for(self.config)
        from solar_assets.dagster_defs.runner import solar_instance

        self.instance = solar_instance(self.home)  # on disk: a schedule context needs an instance ref
        self.cursor = None
        self.keys = sorted(self.defs.resolve_asset_graph().get_all_asset_keys())

    def sensor(self):
        """One tick of the ``source_files`` sensor; applies its partition requests like the daemon."""
        from solar_assets.dagster_defs.sensors import source_files

        result = source_files(dg.build_sensor_context(instance=self.instance, resources={"solar": self.config}))
        if isinstance(result, dg.SkipReason):
            return [], []
        added = []
        for request in result.dynamic_partitions_requests or []:
            self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
            added += [(request.partitions_def_name, k) for k in request.partition_keys]
        return sorted(added), list(result.run_requests or [])

    def observe(self, run_requests) -> None:
        for request in run_requests:
            assert self.defs.resolve_job_def(request.job_name).execute_in_process(
                instance=self.instance, run_config=QUIET_LOGGERS).success

    def materialize(self, selection, partition_key=None, run_config=None) -> dg.ExecuteInProcessResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = dg.materialize([*SOURCE_ASSETS, *ASSETS], selection=list(selection), partition_key=partition_key,
                                    instance=self.instance, resources=self.resources,
                                    run_config={**QUIET_LOGGERS, **(run_config or {})}, raise_on_error=False)
        assert result.success, [e.step_failure_data for e in result.get_step_failure_events()]
        return result

    def tick(self) -> set[tuple[str, str | None]]:
        """One automation tick: what it requests, as (asset, partition) pairs."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = dg.evaluate_automation_conditions(defs=self.defs, instance=self.instance, cursor=self.cursor)
        self.cursor = result.cursor
        return {(key.to_user_string(), None if p is None else _label(p))
                for key in self.keys for p in result.get_requested_partitions(key)}

    def run_requested(self, requested: set[tuple[str, str | None]]) -> None:
        """Materialise a tick's request: one run per partition, as the daemon launches them."""
        by_partition = defaultdict(list)
        for asset, partition in requested:
            by_partition[partition].append(dg.AssetKey(asset))
        for partition, keys in sorted(by_partition.items(), key=lambda kv: str(kv[0])):
            key = None if partition is None else _partition_key(partition)
            self.materialize([k for k in keys], key)

    def settle(self, max_ticks: int = 12) -> list[set[tuple[str, str | None]]]:
        """Tick, run what was requested, repeat until a tick requests nothing; every tick's set."""
        ticks = []
        for _ in range(max_ticks):
            requested = self.tick()
            if not requested:
                return ticks
            ticks.append(requested)
            self.run_requested(requested)
        raise AssertionError(f"still requesting after {max_ticks} ticks: {ticks}")


def _label(partition: str) -> str:
    """``workload@hardware`` for a pair (Dagster writes "hardware|workload"), the key otherwise."""
    if "|" in partition:
        hardware, workload = str(partition).split("|")
        return f"{workload}@{hardware}"
    return str(partition)


def _partition_key(label: str) -> str:
    if "@" in label:
        workload, hardware = label.split("@")
        return workload_hardware_key(workload, hardware)
    return label


@pytest.fixture(scope="module")
def spine(tmp_path_factory):
    s = Spine(tmp_path_factory.mktemp("spine"))
    # discovery: the first sensor tick registers both dirs' stems, the next observes the files
    added, runs = s.sensor()
    assert added == [("hardware", "A6000"), ("hardware", "H100_SXM"), ("workload", "tiny_linear"),
                     ("workload", "tiny_matmul")]
    assert runs == []  # nothing registered was observed yet: the files are observed next tick
    added, runs = s.sensor()
    assert added == [] and sorted(r.job_name for r in runs) == ["observe_hardware_files", "observe_workload_files"]
    s.observe(runs)
    assert s.sensor() == ([], [])  # observed and unchanged: nothing to do
    # everything, once
    for hw in HARDWARE:
        s.materialize([hardware_spec], hw)
    for workload in WORKLOADS:
        s.materialize(WORKLOAD_ASSETS, workload)
        for hw in HARDWARE:
            s.materialize(BOUND_ASSETS, workload_hardware_key(workload, hw))
    s.report = s.materialize([headroom_report]).output_for_node("headroom_report")
    assert s.tick() == set()  # the first tick only records where things stand
    yield s
    s.instance.dispose()


def _pairs(hardware: str, assets=PAIR_ASSETS) -> set[tuple[str, str]]:
    return {(a, f"{w}@{hardware}") for a in assets for w in WORKLOADS}


def test_a_hardware_figure_edit_reanalyses_exactly_that_hardware(spine):
    assert spine.settle() == []  # nothing pending from before
    path = spine.hardware_dir / "A6000.yaml"
    text = path.read_text()
    assert "dram_bytes_per_s: 7.68e+11" in text
    path.write_text(text.replace("dram_bytes_per_s: 7.68e+11", "dram_bytes_per_s: 7.0e+11"))

    added, runs = spine.sensor()
    assert added == [] and [r.job_name for r in runs] == ["observe_hardware_files"]
    assert runs[0].tags["solar/changed"] == "hardware_file[A6000]"
    spine.observe(runs)

    ticks = spine.settle()
    assert ticks == [
        {("hardware_spec", "A6000")},
        # the cache-aware solve reads the spec; sol_bounds reads it too, the inverse roofline reads sol_bounds
        _pairs("A6000", ("cache_aware_bound",)),
        _pairs("A6000", ("sol_bounds",)),
        _pairs("A6000", ("inverse_roofline",)),
        {("headroom_report", None)},
    ]
    materialised = set().union(*ticks)
    print("materialised after the A6000.yaml edit:", sorted(materialised, key=str))
    assert not {p for p in materialised if p[1] and "H100_SXM" in p[1]}
    bounds = spine.instance.get_latest_materialization_event(dg.AssetKey("sol_bounds"))
    assert bounds is not None

    # a comment-only edit changes the file hash but not the figures: it stops at hardware_spec
    path.write_text(path.read_text() + "# reviewed\n")
    _, runs = spine.sensor()
    spine.observe(runs)
    assert spine.settle() == [{("hardware_spec", "A6000")}]


def test_a_workload_edit_reruns_only_that_workloads_chain(spine):
    assert spine.settle() == []
    path = spine.workload_dir / "tiny_linear.py"
    path.write_text(path.read_text().replace("N_OUT = 8", "N_OUT = 10"))
    _, runs = spine.sensor()
    assert [r.job_name for r in runs] == ["observe_workload_files"]
    spine.observe(runs)

    ticks = spine.settle()
    w = "tiny_linear"
    pairs = lambda assets: {(a, f"{w}@{hw}") for a in assets for hw in HARDWARE}  # noqa: E731
    assert ticks == [
        {("workload_source", w)},
        {("ir_translation", w)},
        {("golden_outputs", w)},  # its validation size is the IR's
        {("ir_validation", w)},
        {("einsum_graph", w)},
        {("ski_slope", w)} | pairs(("cache_aware_bound",)),
        pairs(("sol_bounds",)),
        pairs(("inverse_roofline",)),
        {("headroom_report", None)},
    ]
    rows = spine.materialize([headroom_report]).output_for_node("headroom_report")
    assert {(r.workload, r.macs) for r in rows if r.workload == w} == {(w, 4 * 16 * 10)}


def test_the_nightly_schedule_sweeps_exactly_what_is_stale(spine):
    from solar_assets.dagster_defs.automation import reanalyse, stale_partitions
    from solar_assets.dagster_defs.automation import reanalyse_stale as schedule
    from dagster_helpers import dagster_stale

    assert spine.settle() == []
    graph = spine.defs
    assert stale_partitions(spine.instance, graph) == {}
    context = dg.build_schedule_context(instance=spine.instance, repository_def=spine.defs.get_repository_def())
    assert isinstance(schedule(context), dg.SkipReason)

    path = spine.hardware_dir / "H100_SXM.yaml"
    path.write_text(path.read_text().replace("onchip_buffer_bytes: 52428800", "onchip_buffer_bytes: 41943040"))
    _, runs = spine.sensor()
    spine.observe(runs)
    assert stale_partitions(spine.instance, graph) == {dg.AssetKey("hardware_spec"): ["H100_SXM"]}
    assert dagster_stale(spine.instance, spine.defs) == stale_partitions(spine.instance, graph)  # Dagster's verdict
    assert isinstance(schedule(context), dg.RunRequest)

    ran = {(asset, None if p is None else _label(p)) for asset, p in reanalyse(spine.instance, spine.defs)}
    assert ran == {("hardware_spec", "H100_SXM"), ("headroom_report", None)} | {
        (a, f"{w}@H100_SXM") for a in PAIR_ASSETS for w in WORKLOADS}
    assert stale_partitions(spine.instance, graph) == {}


def test_the_nightly_sweep_runs_as_asset_runs_wave_by_wave_through_the_schedule_and_its_sensor(spine):
    """What the daemon does with the sweep: the schedule's tick requests a run that lists what is
    stale (wave 0); the ``solar_sweep_waves`` sensor then requests ordinary asset runs, one wave
    at a time, each once the last one finished, until nothing is stale. Each request is run here
    as the daemon would launch it: the named job, its asset selection and partition."""
    from solar_assets.dagster_defs.automation import SWEEP_TAG, WAVE_TAG, stale_partitions
    from solar_assets.dagster_defs.automation import reanalyse_stale as schedule
    from solar_assets.dagster_defs.automation import reanalyse_stale_waves as waves_sensor

    assert spine.settle() == []
    repository = spine.defs.get_repository_def()

    def tick_sensor(cursor):
        context = dg.build_sensor_context(instance=spine.instance, cursor=cursor, repository_def=repository)
        return waves_sensor(context), context.cursor

    def launch(request):
        job = spine.defs.resolve_job_def(request.job_name or "reanalyse_stale_job")  # a schedule's: its job
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = job.execute_in_process(instance=spine.instance, run_config=QUIET_LOGGERS, tags=request.tags,
                                            partition_key=request.partition_key,
                                            asset_selection=list(request.asset_selection or ()) or None)
        assert result.success
        return result

    path = spine.hardware_dir / "A6000.yaml"
    path.write_text(path.read_text().replace("onchip_buffer_bytes: 6291456", "onchip_buffer_bytes: 5242880"))
    _, runs = spine.sensor()
    spine.observe(runs)
    assert stale_partitions(spine.instance, spine.defs) == {dg.AssetKey("hardware_spec"): ["A6000"]}

    start = schedule(dg.build_schedule_context(instance=spine.instance, repository_def=repository))
    assert isinstance(start, dg.RunRequest) and start.tags[WAVE_TAG] == "0"
    marker = launch(start)
    stale_list = [e for e in marker.all_events if e.event_type == dg.DagsterEventType.STEP_OUTPUT]
    assert "hardware_spec[A6000]" in str(stale_list[0].event_specific_data.metadata["stale"].value)

    cursor, waves = None, []
    for _ in range(12):
        result, cursor = tick_sensor(cursor)
        if isinstance(result, dg.SkipReason):
            break
        wave = set()
        for request in result:
            assert request.tags[SWEEP_TAG] == start.tags[SWEEP_TAG]
            assert request.tags[WAVE_TAG] == str(len(waves) + 1)
            launch(request)
            label = None if request.partition_key is None else _label(request.partition_key)
            wave |= {(k.to_user_string(), label) for k in request.asset_selection}
        waves.append(wave)
    assert "done" in result.skip_message and cursor.endswith(":done")
    pairs = lambda asset: {(asset, f"{w}@A6000") for w in WORKLOADS}  # noqa: E731
    assert waves == [{("hardware_spec", "A6000")}, pairs("cache_aware_bound"), pairs("sol_bounds"),
                     pairs("inverse_roofline"), {("headroom_report", None)}]
    assert stale_partitions(spine.instance, spine.defs) == {}
    again, _ = tick_sensor(cursor)
    assert isinstance(again, dg.SkipReason) and "is done" in again.skip_message
    swept = spine.instance.get_runs(filters=dg.RunsFilter(tags={SWEEP_TAG: start.tags[SWEEP_TAG]}))
    assert len(swept) == 1 + sum(len(w) for w in waves)  # the list, then one run per partition


def test_a_bad_bounds_table_fails_the_asset_check_with_a_readable_description(spine):
    from solar_assets.dagster_defs.asset_checks import REPORT_CHECKS

    good = list(spine.report)
    assert good and all(r.bytes_cache_aware is not None for r in good)
    bad = [good[0].model_copy(update={"sol_fused_s": -1.0}),
           good[1].model_copy(update={"bytes_cache_aware": good[1].bytes_fused - 1}), *good[2:]]

    def run_checks(rows):
        @dg.asset(name="headroom_report")
        def fake_report():
            return rows

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = dg.materialize([fake_report, *REPORT_CHECKS], instance=dg.DagsterInstance.ephemeral())
        return {e.check_name: e for e in result.get_asset_check_evaluations()}

    passed = run_checks(good)
    assert passed["bounds_table"].passed and passed["all_translated_validated"].passed
    failed = run_checks(bad)
    assert failed["all_translated_validated"].passed
    check = failed["bounds_table"]
    assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
    text = check.description
    assert "3 expectation(s) failed" in text  # below fused is below the cache-aware lower bound too
    assert f"sol_fused_s must be positive; 1 row(s) fail: {bad[0].workload}@{bad[0].hardware} (values -1)" in text
    assert f"bytes_fused ≤ bytes_cache_aware" in text and f"{bad[1].workload}@{bad[1].hardware}" in text
    assert "bytes_cache_aware_lb ≤ bytes_cache_aware" in text
