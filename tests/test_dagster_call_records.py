"""A warm ``solar analyze`` on the Dagster path starts no worker for a file whose partitions are current.

Fast: ``call_records`` imports no Dagster, torch or numba; the freshness key changes with each input
it covers (workload bytes, a local module, a hardware figure, the hardware set, a ``SOLAR_*``
setting, the target latency) and not with ``SOLAR_HOME``; a record is a hit only while its stored
files are unchanged, and a corrupt one is a quiet miss.

Slow (one home, calls in order): after a first call over four small workloads and a broken file,
a second call starts no worker, adds exactly one run (the report's), materialises none of the
files' partitions, leaves nothing stale and gives the same rows and per-op rows. Then each edge
case is a miss (or a failed verification) computed again, with rows equal to the plain path's:
an edited workload, an edited helper module, a deleted stored value and the broken file (in one
call, beside an unchanged file that stays a hit); an edited hardware figure; another hardware set;
another ``SOLAR_*`` setting; a wiped ``$SOLAR_HOME/dagster``.
"""
from __future__ import annotations

import hashlib

import logging
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dagster_helpers import call_tree
from workload_texts import BMM_PAIR, TANH_LINEAR as LINEAR

REPO = Path(__file__).resolve().parents[1]
HARDWARE = ["A6000", "H100_SXM"]

USES_HELPER = '''import torch
import torch.nn as nn

from helper_width import WIDTH


class Model(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(8, width, bias=False)

    def forward(self, x):
        return torch.relu(self.proj(x))


def get_inputs():
    return [torch.randn(3, 8)]


def get_init_inputs():
    return [WIDTH]
'''
SCALE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x) * 2.0


def get_inputs():
    return [torch.randn(16, 9)]


def get_init_inputs():
    return []
'''
BROKEN = "class Model(:\n"  # a syntax error: workload_source fails, naming the file


def _key(path: Path) -> str:
    from solar_assets.asset_compute.keys import workload_key

    return workload_key(path, REPO / "data" / "workloads")


def _freshness(path: Path, target=None) -> str | None:
    from solar_assets.chain.config import RunConfig
    from solar_assets.dagster_defs.call_records import freshness_key

    return freshness_key(path, _key(path), target, RunConfig.from_env())


# ---------------------------------------------------------------------------- fast
def test_call_records_import_no_dagster_torch_or_numba(tmp_path):
    """The CLI decides hits before Dagster is imported: the module, the key and the lookup load
    none of the heavy packages (a fresh interpreter)."""
    (tmp_path / "w.py").write_text(LINEAR.format(batch=4))
    probe = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from solar_assets.chain.config import RunConfig
        from solar_assets.dagster_defs import call_records
        from solar_assets.asset_compute.keys import workload_key
        from solar_assets.hardware import hardware_dir
        path = {str(tmp_path / "w.py")!r}
        key = workload_key(path, "data/workloads")
        fresh = call_records.freshness_key(path, key, None, RunConfig.from_env())
        specs = call_records.spec_versions(["H100_SXM"], hardware_dir())
        assert fresh and call_records.find_hits(Path({str(tmp_path)!r}), {{path: key}}, {{path: fresh}}, specs) == {{}}
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "numba", "dagster", "jax")))
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO), "SOLAR_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=REPO,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_freshness_key_covers_every_input(tmp_path, monkeypatch):
    hardware_dir = tmp_path / "hardware"
    hardware_dir.mkdir()
    for name in HARDWARE:
        shutil.copy(REPO / "hardware" / f"{name}.yaml", hardware_dir / f"{name}.yaml")
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(hardware_dir))
    workload, helper = tmp_path / "uses_helper.py", tmp_path / "helper_width.py"
    workload.write_text(USES_HELPER)
    helper.write_text("WIDTH = 6\n")
    base = _freshness(workload)
    assert base is not None and base == _freshness(workload)  # deterministic
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "elsewhere"))  # where results live, not what they are
    assert _freshness(workload) == base
    seen = {base}

    def changed(label: str, key: str | None) -> None:
        assert key is not None and key not in seen, label
        seen.add(key)

    helper.write_text("WIDTH = 7\n")
    changed("helper module", _freshness(workload))
    workload.write_text(USES_HELPER.replace("torch.randn(3, 8)", "torch.randn(4, 8)"))
    changed("workload bytes", _freshness(workload))
    changed("target latency", _freshness(workload, target=1e-3))
    # a spec is not in the file's key: each part's digest decides that part's bound assets alone
    from solar_assets.dagster_defs.call_records import spec_versions

    specs = spec_versions(HARDWARE, hardware_dir)
    spec = hardware_dir / "A6000.yaml"
    spec.write_text(re.sub(r"^(dram_bytes_per_s:\s*)([0-9.eE+]+)", lambda m: f"{m[1]}{float(m[2]) * 0.5:.6g}",
                           spec.read_text(), count=1, flags=re.M))
    now = spec_versions(HARDWARE, hardware_dir)
    assert now["A6000"] != specs["A6000"] and {k: v for k, v in now.items() if k != "A6000"} == \
        {k: v for k, v in specs.items() if k != "A6000"}
    assert _freshness(workload) in seen
    monkeypatch.setenv("SOLAR_FP32_MATH", "tf32")
    changed("a SOLAR_* setting", _freshness(workload))
    assert _freshness(tmp_path / "missing.py") is None  # unreadable: never a hit


def _fake_record(home: Path, path: Path) -> tuple[str, str]:
    """A record of one partition with a stored value on disk (no Dagster involved)."""
    from ir_schemas import PerOpRow
    from solar_assets import cache_store
    from solar_assets.dagster_defs.call_records import CallRecord, RecordedPartition, per_op_file, per_op_payload

    stored = home / "storage" / "workload_source" / _key(path)
    stored.parent.mkdir(parents=True)
    stored.write_bytes(b"a value")
    fresh = _freshness(path)
    row = PerOpRow(workload="w", hardware="H100_SXM", rank=1, node="addmm", op="aten.addmm.default", module="fc",
                   macs=288, flops=576, bytes=512, compute_s=1.5e-12, memory_s=2.5e-10, time_s=2.5e-10, share=1.0,
                   limiter="memory", ir_nodes=2, exact=True)
    stat = stored.stat()
    payload = per_op_payload([row])
    assert cache_store.store(per_op_file(home, _key(path)), payload)
    record = CallRecord(freshness_key=fresh, workload_key=_key(path), workload="w", path=str(path),
                        per_op_digest=hashlib.sha256(payload).hexdigest(),
                        partitions=[RecordedPartition(asset="workload_source", partition=_key(path), data_version="v1", storage_id=1,
                                                      storage=str(stored.relative_to(home)), size=stat.st_size,
                                                      mtime_ns=stat.st_mtime_ns)])
    assert cache_store.store(cache_store.call_record_entry(home, _key(path)), record.model_dump_json())
    return fresh, str(stored)


def test_a_record_is_a_hit_only_while_its_key_and_stored_files_match(tmp_path, caplog):
    from solar_assets import cache_store
    from solar_assets.dagster_defs.call_records import find_hits, per_op_digest, per_op_file, read_per_op

    home, path = tmp_path / "home", tmp_path / "w.py"
    path.write_text(LINEAR.format(batch=4))
    fresh, stored = _fake_record(home, path)
    keys = {str(path): _key(path)}
    (hit,) = find_hits(home, keys, {str(path): fresh}, {}).values()
    assert not hit.stale
    (row,) = read_per_op(per_op_file(home, _key(path)))
    assert row.macs == 288 and row.memory_s == 2.5e-10  # the rows survive JSON, in their own file
    assert hit.record.per_op_digest == per_op_digest([row])  # the digest of the rows, read or computed
    (hit,) = find_hits(home, keys, {str(path): fresh}, {"H100_SXM": "a digest"}).values()
    assert hit.stale == ("H100_SXM",)  # a part it was never bounded on: its bound assets alone
    assert find_hits(home, keys, {str(path): "another key"}, {}) == {}
    assert find_hits(home, keys, {str(path): None}, {}) == {}
    os.utime(stored, ns=(1, 1))  # rewritten (same size): not the recorded value
    assert find_hits(home, keys, {str(path): fresh}, {}) == {}
    per_op_file(home, _key(path)).unlink()  # the per-op rows gone: a miss (the report needs them)
    assert find_hits(home, keys, {str(path): fresh}, {}) == {}
    fresh, stored = _fake_record(tmp_path / "home2", path)
    Path(stored).unlink()
    assert find_hits(tmp_path / "home2", keys, {str(path): fresh}, {}) == {}
    fresh, _ = _fake_record(tmp_path / "home3", path)
    entry = cache_store.call_record_entry(tmp_path / "home3", _key(path))
    entry.write_text(entry.read_text()[:-5])  # truncated
    with caplog.at_level(logging.DEBUG, logger="solar_assets.cache_store"):
        assert find_hits(tmp_path / "home3", keys, {str(path): fresh}, {}) == {}
    assert [r for r in caplog.records if r.name == "solar_assets.cache_store" and "discarded" in r.getMessage()]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # a corrupt record is a quiet miss


# ---------------------------------------------------------------------------- slow: real calls
@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("records")
    hardware_dir, workloads, home = call_tree(root, HARDWARE)
    texts = {"fc_tanh": LINEAR.format(batch=4), "uses_helper": USES_HELPER, "bmm_pair": BMM_PAIR, "stays": SCALE,
             "broken": BROKEN}
    files = {}
    for name, text in texts.items():
        files[name] = workloads / f"{name}.py"
        files[name].write_text(text)
    (workloads / "helper_width.py").write_text("WIDTH = 6\n")
    patch = pytest.MonkeyPatch()
    patch.setenv("SOLAR_HARDWARE_DIR", str(hardware_dir))
    patch.delenv("SOLAR_FP32_MATH", raising=False)
    yield {"files": files, "home": home, "hardware_dir": hardware_dir, "patch": patch}
    patch.undo()


class Spy:
    """Counts the files handed to the worker pool (then runs them)."""

    def __init__(self, monkeypatch):
        import solar_assets.workers as workers

        self.calls: list[list[str]] = []
        real = workers.run_in_workers

        def spy(paths, *args, **kwargs):
            self.calls.append([Path(p).stem for p in paths])
            return real(paths, *args, **kwargs)

        monkeypatch.setattr(workers, "run_in_workers", spy)


def _call(setup, names, hardware=HARDWARE, monkeypatch=None, **options):
    from solar_assets.dagster_defs.runner import analyze_with_dagster

    spy = Spy(monkeypatch)
    results, rows = analyze_with_dagster([str(setup["files"][n]) for n in names], hardware, home=setup["home"],
                                         timeout_s=600, **options)
    return spy.calls, {Path(r.path).stem: r for r in results}, [r.model_dump() for r in rows]


def _differences(got: list[dict], want: list[dict]) -> list[tuple]:
    """``(workload, hardware, column, got, want)`` of each cell where two row lists differ (a
    readable failure, where pytest cuts the dicts short)."""
    if [(r["workload"], r["hardware"]) for r in got] != [(r["workload"], r["hardware"]) for r in want]:
        return [("rows", [(r["workload"], r["hardware"]) for r in got], [(r["workload"], r["hardware"]) for r in want])]
    return [(g["workload"], g["hardware"], k, g.get(k), w.get(k)) for g, w in zip(got, want)
            for k in sorted(set(g) | set(w)) if g.get(k) != w.get(k)]


def _plain(setup, names, hardware=HARDWARE) -> list[dict]:
    """The same files through the stages without Dagster, in this process, from no cache."""
    from solar_assets import pipeline

    results = pipeline.analyze_in_workers([str(setup["files"][n]) for n in names], hardware, cache_dir=None, jobs=0)
    return [row.model_dump() for r in results for row in r.rows]


def _latest(home: Path, results) -> dict[tuple[str, str], tuple[str, int]]:
    """``(asset, partition) -> (data version, storage id)`` of every recorded partition of the files."""
    import dagster as dg

    from solar_assets.dagster_defs.step_events import latest_versions
    from solar_assets.dagster_defs.call_records import load_record
    from solar_assets.dagster_defs.runner import solar_instance

    wanted: dict[str, set[str]] = {}
    for result in results:
        for p in load_record(home, _key(Path(result.path))).partitions:
            wanted.setdefault(p.asset, set()).add(p.partition)
    with solar_instance(home) as instance:
        return {(a, k): v for a, keys in wanted.items()
                for k, v in latest_versions(instance, dg.AssetKey(a), keys).items()}


GOOD = ["fc_tanh", "uses_helper", "bmm_pair", "stays"]


def _latest_partition(instance, asset: str) -> str:
    import dagster as dg

    return next(iter(instance.get_latest_storage_id_by_partition(dg.AssetKey(asset),
                                                                 dg.DagsterEventType.ASSET_MATERIALIZATION)))


@pytest.mark.slow
def test_a_warm_call_starts_no_worker_and_records_nothing_new(setup, monkeypatch):
    import dagster as dg

    from solar_assets.dagster_defs.automation import stale_partitions
    from solar_assets.dagster_defs.call_records import load_record, per_op_digest, read_per_op
    from solar_assets.dagster_defs.definitions import build_definitions
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.runner import solar_instance

    home = setup["home"]
    calls, first, rows = _call(setup, [*GOOD, "broken"], monkeypatch=monkeypatch)
    assert calls == [[*GOOD, "broken"]]
    assert "broken.py" in first["broken"].error and all(first[n].ok for n in GOOD)
    assert _differences(rows, _plain(setup, GOOD)) == []
    assert all(load_record(home, _key(setup["files"][n])) is not None for n in GOOD)
    assert load_record(home, _key(setup["files"]["broken"])) is None  # it failed: never recorded
    # the record holds what the call recorded: every workload asset and, per part, the bound assets
    record_of_fc = load_record(home, _key(setup["files"]["fc_tanh"]))
    assert {p.asset for p in record_of_fc.partitions} == {
        "workload_source", "golden_outputs", "ir_translation", "ir_validation", "einsum_graph",
        "cache_aware_bound", "sol_bounds"}  # the ski-slope is on demand (--ski-slope)
    assert len(record_of_fc.partitions) == 5 + 2 * len(HARDWARE)
    with solar_instance(home) as instance:
        runs_before = len(instance.get_runs())
    latest_before = _latest(home, [first[n] for n in GOOD])

    calls, second, again = _call(setup, GOOD, monkeypatch=monkeypatch)
    assert calls == []  # no worker started at all
    assert again == rows
    for name in GOOD:
        assert second[name].ok and second[name].workload == first[name].workload
        # its per-op rows stay in the record's file until a report needs them, named by their digest
        recorded = read_per_op(second[name].per_op_file)
        assert second[name].per_op == [] and second[name].per_op_digest == per_op_digest(first[name].per_op)
        assert [o.model_dump() for o in recorded] == [o.model_dump() for o in first[name].per_op]
        assert {o.hardware for o in recorded} == set(HARDWARE)
    assert _latest(home, [first[n] for n in GOOD]) == latest_before  # no new materialisation of theirs
    with solar_instance(home) as instance:
        # nothing to compute or record: no call run; the report runs, as the broken file left its list
        runs = instance.get_runs()
        assert len(runs) == runs_before + 1 and runs[0].status == dg.DagsterRunStatus.SUCCESS
        written = {r.event_log_entry.dagster_event.asset_key.to_user_string()
                   for r in instance.get_records_for_run(
                       runs[0].run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records}
        assert written == {"headroom_report"}  # the specs are unchanged: not recorded again
        base = SolarConfig.default(home)
        config = base.model_copy(update={"workload_files": {_key(f): str(f) for f in setup["files"].values()}})
        assert stale_partitions(instance, build_definitions(config)) == {}

    # the same call again: its report would read the same values with the same inputs, so no run at all
    calls, third, once_more = _call(setup, GOOD, monkeypatch=monkeypatch)
    assert calls == [] and once_more == rows and all(third[n].ok for n in GOOD)
    from solar_assets.dagster_defs.call import report_is_current
    from solar_assets.dagster_defs.call_records import load_report_record

    made = load_report_record(home, [], None)
    with solar_instance(home) as instance:
        assert len(instance.get_runs()) == runs_before + 1
        assert made is not None and report_is_current(instance, made.storage_id)
        # anything the report reads materialised after it (a UI run, another tool): no longer current
        instance.report_runless_asset_event(dg.AssetMaterialization("cache_aware_bound", partition=_latest_partition(
            instance, "cache_aware_bound")))
        assert not report_is_current(instance, made.storage_id)
    assert load_report_record(home, ["another failure"], None) is None  # the report of other inputs
    assert load_report_record(home, [], 1e-3) is None

    # --ski-slope asks for an asset the record lacks: the file is computed again, the ski-slope with it
    calls, _, _ = _call(setup, ["stays"], monkeypatch=monkeypatch, ski_slope=True)
    assert calls == [["stays"]]
    assert "ski_slope" in {p.asset for p in load_record(home, _key(setup["files"]["stays"])).partitions}
    assert (home / "reports" / "skislope" / "stays.csv").is_file()
    calls, _, _ = _call(setup, ["stays"], monkeypatch=monkeypatch)  # a record holding more still answers
    assert calls == []


@pytest.mark.slow
def test_each_changed_input_is_computed_again_beside_a_file_that_stays_a_hit(setup, monkeypatch):
    """An edited workload, an edited helper module, a deleted stored bound value and the file that
    failed last time: computed again in one call; the unchanged file is still a hit."""
    from solar_assets.dagster_defs.call_records import load_record

    files, home = setup["files"], setup["home"]
    files["fc_tanh"].write_text(LINEAR.format(batch=5))
    (files["uses_helper"].parent / "helper_width.py").write_text("WIDTH = 10\n")
    stored = load_record(home, _key(files["bmm_pair"])).partitions
    (home / next(p.storage for p in stored if p.asset == "sol_bounds")).unlink()
    calls, results, rows = _call(setup, [*GOOD, "broken"], monkeypatch=monkeypatch)
    # bmm_pair lost a stored bound value: that part's bound assets alone, from its stored values, no worker
    assert calls == [["fc_tanh", "uses_helper", "broken"]]
    assert _differences(rows, _plain(setup, GOOD)) == []
    macs = {(r["workload"], r["hardware"]): r["macs"] for r in rows}
    assert macs[("fc_tanh", "A6000")] == 5 * 12 * 6 and macs[("uses_helper", "H100_SXM")] == 3 * 8 * 10


@pytest.mark.slow
def test_a_hardware_figure_another_set_or_setting_and_a_wiped_history_are_computed_again(setup, monkeypatch):
    import dagster as dg

    from solar_assets.dagster_defs.runner import solar_instance

    spec = setup["hardware_dir"] / "A6000.yaml"
    text, count = re.subn(r"^(dram_bytes_per_s:\s*)([0-9.eE+]+)", lambda m: f"{m[1]}{float(m[2]) * 0.5:.6g}",
                          spec.read_text(), count=1, flags=re.M)
    assert count == 1
    spec.write_text(text)
    calls, _, rows = _call(setup, GOOD, monkeypatch=monkeypatch)
    assert calls == [] and rows == _plain(setup, GOOD)  # only A6000's bound assets ran, in this process
    from solar_assets.dagster_defs.call_records import load_record, per_op_file, read_per_op

    for name in GOOD:  # the new record: A6000's per-op rows replaced, the other part's kept, none twice
        per_op = read_per_op(per_op_file(setup["home"], _key(setup["files"][name])))
        assert sorted({o.hardware for o in per_op}) == sorted(HARDWARE)
        assert len({(o.hardware, o.rank) for o in per_op}) == len(per_op)
        assert load_record(setup["home"], _key(setup["files"][name])) is not None

    calls, _, rows = _call(setup, GOOD, ["H100_SXM"], monkeypatch=monkeypatch)
    assert calls == [] and rows == _plain(setup, GOOD, ["H100_SXM"])  # a part the records hold
    monkeypatch.setenv("SOLAR_CALL_RECORDS_TEST", "1")  # any SOLAR_* setting is in the key
    calls, _, again = _call(setup, GOOD, ["H100_SXM"], monkeypatch=monkeypatch)
    assert calls == [GOOD] and again == rows

    shutil.rmtree(setup["home"] / "dagster")  # the records stay; the instance contradicts them
    calls, _, again = _call(setup, GOOD, ["H100_SXM"], monkeypatch=monkeypatch)
    assert calls == [GOOD] and again == rows  # verification failed: the second pass computed them
    with solar_instance(setup["home"]) as instance:
        (run,) = [r for r in instance.get_runs() if r.job_name == "solar_analyze"]
        sol = {r.event_log_entry.dagster_event.partition for r in instance.get_records_for_run(
            run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
            if r.event_log_entry.dagster_event.asset_key == dg.AssetKey("sol_bounds")}
        assert sol == {f"H100_SXM|{_key(setup['files'][n])}" for n in GOOD}
    assert _call(setup, GOOD, ["H100_SXM"], monkeypatch=monkeypatch)[0] == []
