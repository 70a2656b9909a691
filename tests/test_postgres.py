"""Dagster's run, event and schedule storage on a real PostgreSQL server (``dagster-postgres``),
with the multiprocess executor: two shipped workloads give the same report rows as the SQLite
instance of ``solar analyze``.

The server: ``postgres_server.postgres_url``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from postgres_server import postgres_url  # noqa: F401 - the fixture

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = ("gemm", "conv2d_bias_relu")
HARDWARE = "H100_SXM"


def _execute(instance, job_fn, partition: str | None, partition_tags: dict[str, str] | None = None) -> None:
    import dagster as dg

    tags = {} if partition is None else {"dagster/partition": partition, **(partition_tags or {})}
    with dg.execute_job(dg.reconstructable(job_fn), instance=instance, tags=tags,
                        run_config={"execution": {"config": {"max_concurrent": 2}}}) as result:
        assert result.success, [e.message for e in result.all_events if e.is_failure]
        assert result.dagster_run.run_config["execution"]["config"]["max_concurrent"] == 2


def test_postgres_storage_matches_sqlite(tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import dagster as dg

    from solar_assets.dagster_defs.partitions import register_partitions
    from solar_assets.dagster_defs.scale_out import bounds_job, hardware_job, report_job, workload_job

    files = [str(REPO / "data" / "workloads" / f"{w}.py") for w in WORKLOADS]
    # the reference: solar analyze on its embedded SQLite instance
    sqlite_home = tmp_path / "sqlite"
    done = subprocess.run([sys.executable, "-m", "solar_assets.cli", "analyze", *files, "--hardware", HARDWARE,
                           "--home", str(sqlite_home), "--json", "--no-progress"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    sqlite_rows = json.loads(done.stdout)["rows"]

    pg_home = tmp_path / "pg"
    dagster_home = pg_home / "dagster"
    dagster_home.mkdir(parents=True)
    (dagster_home / "dagster.yaml").write_text(
        "telemetry:\n  enabled: false\nstorage:\n  postgres:\n"
        f"    postgres_url: \"{postgres_url}\"\n")
    monkeypatch.setenv("SOLAR_HOME", str(pg_home))
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    # the multiprocess executor rebuilds the jobs (solar_assets.dagster_defs.scale_out) in each step process
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    with dg.DagsterInstance.get() as instance:
        from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
        register_partitions(instance, list(WORKLOADS), [HARDWARE])
        _execute(instance, hardware_job, HARDWARE)
        for workload in WORKLOADS:
            _execute(instance, workload_job, workload)
            _execute(instance, bounds_job, f"{HARDWARE}|{workload}",
                     {"dagster/partition/hardware": HARDWARE, "dagster/partition/workload": workload})
        _execute(instance, report_job, None)
        runs = instance.get_runs()
        assert len(runs) == 2 + 2 * len(WORKLOADS)
        assert all(r.run_config["execution"]["config"]["max_concurrent"] == 2 for r in runs)
        event = instance.get_latest_materialization_event(dg.AssetKey("headroom_report"))
        assert event is not None and event.asset_materialization.metadata["rows"].value == len(WORKLOADS)
    pg_rows = json.loads((pg_home / "reports" / "report.json").read_text())
    pg_rows = pg_rows["rows"] if isinstance(pg_rows, dict) else pg_rows
    key = lambda r: (r["workload"], r["hardware"])  # noqa: E731
    assert sorted(pg_rows, key=key) == sorted(sqlite_rows, key=key)


def test_solar_analyze_on_postgres_is_one_run_with_the_same_rows(tmp_path: Path, postgres_url: str) -> None:
    """``solar analyze`` itself on a Postgres instance: its call's run materialises every partition
    from its one step (``dagster_defs.step_events``), and the rows equal the plain path's
    (``--no-dagster``)."""
    import dagster as dg

    files = [str(REPO / "data" / "workloads" / f"{w}.py") for w in WORKLOADS]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("DAGSTER_HOME", None)
    rows = {}
    for kind, extra in (("plain", ["--no-dagster"]), ("pg", [])):
        home = tmp_path / kind
        if kind == "pg":  # a dagster.yaml of the user's is left as it is: solar's instance is then Postgres
            (home / "dagster").mkdir(parents=True)
            (home / "dagster" / "dagster.yaml").write_text(
                f"telemetry:\n  enabled: false\nstorage:\n  postgres:\n    postgres_url: \"{postgres_url}\"\n")
        done = subprocess.run([sys.executable, "-m", "solar_assets.cli", "analyze", *files, "--hardware", HARDWARE,
                               "--home", str(home), "--json", "--no-progress", *extra],
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        rows[kind] = json.loads(done.stdout)["rows"]  # the --json document: schema, rows, failures
    key = lambda r: (r["workload"], r["hardware"])  # noqa: E731
    assert sorted(rows["pg"], key=key) == sorted(rows["plain"], key=key)
    with dg.DagsterInstance.from_config(str(tmp_path / "pg" / "dagster")) as instance:
        from dagster_postgres import PostgresEventLogStorage

        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        run = instance.get_runs(filters=dg.RunsFilter(job_name="solar_analyze"))
        assert len(run) == 1 and run[0].status == dg.DagsterRunStatus.SUCCESS  # the call's run
        sol = instance.get_records_for_run(run[0].run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
        assert sorted(r.event_log_entry.dagster_event.partition for r in sol
                      if r.event_log_entry.dagster_event.asset_key == dg.AssetKey("sol_bounds")) == \
            sorted(f"{HARDWARE}|{w}" for w in WORKLOADS)


def test_concurrent_calls_on_postgres_all_succeed(tmp_path: Path, postgres_url: str) -> None:
    """Ten ``solar analyze`` at once on one Postgres instance — six on one home and four on homes of
    their own sharing the database (as other machines would): every call gets its rows, and no run
    is left started."""
    import dagster as dg

    files = [str(REPO / "data" / "workloads" / f"{w}.py") for w in WORKLOADS]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("DAGSTER_HOME", None)
    homes = [tmp_path / "shared"] * 6 + [tmp_path / f"own{i}" for i in range(4)]  # ten calls at once
    for home in set(homes):
        (home / "dagster").mkdir(parents=True)
        (home / "dagster" / "dagster.yaml").write_text(
            f"telemetry:\n  enabled: false\nstorage:\n  postgres:\n    postgres_url: \"{postgres_url}\"\n")
    calls = [subprocess.Popen([sys.executable, "-m", "solar_assets.cli", "analyze", *files, "--hardware", HARDWARE,
                               "--home", str(home), "--json", "--no-progress"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for home in homes]
    outs = [c.communicate(timeout=1200) for c in calls]
    for call, (out, err) in zip(calls, outs):
        assert call.returncode == 0, err[-3000:]
        assert sorted(r["workload"] for r in json.loads(out)["rows"]) == sorted(WORKLOADS)
    with dg.DagsterInstance.from_config(str(tmp_path / "shared" / "dagster")) as instance:
        runs = instance.get_runs(filters=dg.RunsFilter(tags={"solar/cli": "analyze"}))
        assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
