"""Jobs for running solar's assets out of process: one job per partitions definition (Dagster runs
one partition per run), on the multiprocess executor. ``tests/test_postgres.py`` runs them on a
PostgreSQL instance; docs/scale_out.md shows the same definitions on the Kubernetes executor.

``call_job``: the run of ``solar analyze --executor dask`` (``call.run_distributed``) on Dagster's
Dask executor, one step per file; ``tests/test_dask_call.py`` runs it on two Dask workers.

Each ``*_job`` function is a zero-argument module-level function so that
``dg.reconstructable`` can rebuild the job in each step process (the executor imports this
module by name). The solar resource is bound to ``$SOLAR_HOME`` as in ``definitions.py``.
"""
from __future__ import annotations

import os
import pickle
import socket
from pathlib import Path
from typing import Any

import dagster as dg

WORKLOAD_STAGES = ("workload_source", "golden_outputs", "ir_translation", "ir_validation", "einsum_graph")
BOUND_STAGES = ("sol_bounds", "cache_aware_bound")
MAX_CONCURRENT = 2


def scale_out_definitions(max_concurrent: int = MAX_CONCURRENT, executor: dg.ExecutorDefinition | None = None,
                          executor_config: dict[str, Any] | None = None) -> dg.Definitions:
    """solar's assets with four jobs (hardware, workload, bounds, report), on the multiprocess
    executor or on ``executor`` with ``executor_config`` as each job's default run config (which
    Dagster checks against the executor's schema as it loads the jobs)."""
    from solar_assets import pipeline
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.sources import SOURCE_ASSETS
    from solar_assets.dagster_defs.assets import ASSETS
    from solar_assets.dagster_defs.instance import resources_for

    config = {"execution": {"config": executor_config}} if executor_config is not None else None
    jobs = [dg.define_asset_job(name, selection=list(selection), executor_def=executor, config=config)
            for name, selection in (("solar_hardware", ["hardware_spec"]), ("solar_workload", WORKLOAD_STAGES),
                                    ("solar_bounds", BOUND_STAGES), ("solar_report", ["headroom_report"]))]
    return dg.Definitions(assets=[*SOURCE_ASSETS, *ASSETS], jobs=jobs,
                          resources=resources_for(SolarConfig.default(pipeline.solar_home())),
                          executor=dg.multiprocess_executor.configured({"max_concurrent": max_concurrent}))


def hardware_job() -> dg.JobDefinition:
    return scale_out_definitions().resolve_job_def("solar_hardware")


def workload_job() -> dg.JobDefinition:
    return scale_out_definitions().resolve_job_def("solar_workload")


def bounds_job() -> dg.JobDefinition:
    return scale_out_definitions().resolve_job_def("solar_bounds")


def report_job() -> dg.JobDefinition:
    return scale_out_definitions().resolve_job_def("solar_report")


def call_job(plan: str, files: int) -> dg.JobDefinition:
    """The call's run on the Dask executor: ``record_sources`` (the files' observations and the
    specs), then ``analyse_file_<i>`` for each of the call's ``files`` files, each on a Dask
    worker: the file computed in a limited worker process started there (or its stale parts'
    bounds alone), its partitions logged from that step with the worker's address. ``plan``: the
    pickled call driver (``runner._CallDriver``) on the shared home. Rebuilt from these
    arguments in every step (``dg.build_reconstructable_job``)."""
    from dagster_dask import dask_executor

    from solar_assets.dagster_defs.call import file_step

    @dg.op(name="record_sources", description="The call's observations of its files and its hardware specs.")
    def record_sources(context):  # noqa: ANN001, ANN202 - Dagster reads the hints at runtime
        from solar_assets.dagster_defs.step_events import StepEvents

        _quiet_dask()
        _driver(plan).log_prepared(StepEvents(context))

    def file_op(index: int) -> dg.OpDefinition:
        @dg.op(name=file_step(index), ins={"after": dg.In(dg.Nothing)}, out=dg.Out(dg.Any),
               description="One workload file's asset partitions, computed on this Dask worker.")
        def analyse_file(context):  # noqa: ANN001, ANN202
            import multiprocessing

            from solar_assets.dagster_defs.step_events import StepEvents

            if multiprocessing.current_process().daemon:
                raise dg.Failure(description=f"the Dask worker {worker_name()} is a daemonic process, which may not "
                                             "start the file's limited worker: start Dask workers with --no-nanny or "
                                             "DASK_DISTRIBUTED__WORKER__DAEMON=False")
            _quiet_dask()
            driver = _driver(plan)
            path = driver.step_files()[index]
            computed = path not in driver.work()[1]
            worker = worker_name()
            events = StepEvents(context, metadata={"worker": worker, "worker_pid": os.getpid()})
            driver.run_files(context, events, [path] if computed else [], [] if computed else [path])
            context.log.info(f"{path}: analysed on {worker}")
            outcome = driver.outcome(path)
            outcome.worker = worker
            return outcome

        return analyse_file

    ops = [file_op(i) for i in range(files)]

    @dg.graph(name="solar_analyze")
    def analyse():
        done = record_sources()
        for op in ops:
            op(after=done)

    return analyse.to_job(executor_def=dask_executor, resource_defs={
        "io_manager": dg.FilesystemIOManager(base_dir=str(Path(plan).parent / "outputs"))})


def _quiet_dask() -> None:
    """In a Dask worker: its size estimate of a step's result (Dagster's events) fails and warns
    once per step; held to errors, as the call's own process does (``call.dask_scheduler``)."""
    import logging

    logging.getLogger("distributed.sizeof").setLevel(logging.ERROR)


def _driver(plan: str) -> Any:
    return pickle.loads(Path(plan).read_bytes())


def worker_name() -> str:
    """The Dask worker's address, or ``host:pid`` outside a Dask worker."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"
