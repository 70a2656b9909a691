"""``solar analyze --executor dask``: the call's run on Dagster's Dask executor (dagster-dask), one
step per file, on two Dask worker processes started here as stand-ins for two hosts (a
``dask scheduler`` and two ``dask worker --no-nanny`` on 127.0.0.1), with a real PostgreSQL
server as the Dagster instance. The rows equal the plain path's (``--no-dagster``), and the
materialisations the steps logged name the worker process that computed them: each of the two
ran some of the files.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_server import free_port, postgres_url, postgres_yaml  # noqa: F401 - the fixture

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = ("gemm", "conv2d_bias_relu", "layernorm_gelu_mlp", "small_cnn")
HARDWARE = "H100_SXM,B200"


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[int]]]:
    """``(scheduler address, [worker pid, worker pid])``; every process stopped after."""
    pytest.importorskip("dagster_dask", reason="pip install -e '.[dask]' (make test does)")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path_factory.mktemp("dask")
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--no-dashboard"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=open(logs / "scheduler.log", "w"))
    workers = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
                                 "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard", "--name", f"host{i}"],
                                env=env, stdout=subprocess.DEVNULL, stderr=open(logs / f"worker{i}.log", "w"))
               for i in range(2)]
    try:
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
            pids = sorted(client.run(os.getpid).values())  # each worker's own process id
        assert pids == sorted(w.pid for w in workers)  # no nanny: the worker is the process started here
        yield address, pids
    finally:
        for process in [*workers, scheduler]:
            process.terminate()
        for process in [*workers, scheduler]:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _analyze(files: list[str], home: Path, *extra: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("DAGSTER_HOME", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "solar_assets.cli", "analyze", *files, "--hardware", HARDWARE,
                           "--home", str(home), "--json", "--no-progress", *extra],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"{' '.join(extra) or 'plain'}: {time.perf_counter() - start:.1f} s")
    return json.loads(done.stdout)["rows"]


def test_dask_executor_on_two_workers_gives_the_plain_rows(tmp_path: Path, postgres_url: str,
                                                          dask_cluster: tuple[str, list[int]]) -> None:
    import dagster as dg

    address, pids = dask_cluster
    files = [str(REPO / "data" / "workloads" / f"{w}.py") for w in WORKLOADS]
    plain = _analyze(files, tmp_path / "plain", "--no-dagster")
    home = tmp_path / "dask"
    (home / "dagster").mkdir(parents=True)
    (home / "dagster" / "dagster.yaml").write_text(postgres_yaml(postgres_url))
    rows = _analyze(files, home, "--executor", "dask", "--dask-scheduler", address)
    key = lambda r: (r["workload"], r["hardware"])  # noqa: E731
    assert sorted(rows, key=key) == sorted(plain, key=key)
    assert len(rows) == len(WORKLOADS) * 2

    with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
        from dagster_postgres import PostgresEventLogStorage

        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        [run] = instance.get_runs(filters=dg.RunsFilter(job_name="solar_analyze"))
        assert run.status == dg.DagsterRunStatus.SUCCESS
        records = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
        by_asset: dict[str, dict[str, int]] = {}
        for record in records:
            event = record.event_log_entry.dagster_event
            if event.asset_key.path[-1] == "hardware_spec":
                continue  # the call's first step, before the files
            by_asset.setdefault(event.asset_key.path[-1], {})[event.partition] = \
                event.step_materialization_data.materialization.metadata["worker_pid"].value
        # every stage of every file materialised, from the step that ran it on a Dask worker
        assert set(by_asset) >= {"ir_translation", "ir_validation", "einsum_graph", "sol_bounds"}
        assert sorted(by_asset["ir_translation"]) == sorted(WORKLOADS)
        assert len(by_asset["sol_bounds"]) == len(WORKLOADS) * 2
        used = {pid for partitions in by_asset.values() for pid in partitions.values()}
        assert used == set(pids), f"workers {pids}, steps on {used}"
        # one worker per file: a file's bounds come from the process that translated it
        for partition, pid in by_asset["sol_bounds"].items():
            assert pid == by_asset["ir_translation"][partition.split("|")[-1]]

    again = _analyze(files, home, "--executor", "dask", "--dask-scheduler", address)  # nothing changed
    assert sorted(again, key=key) == sorted(plain, key=key)
