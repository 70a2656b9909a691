"""A call told to stop (Ctrl-C, ``kill``, ``timeout``) ends: Dagster turns the signal into a failed
step, and the CLI must not take that for a broken instance and run every stage again without
Dagster (seen: ``timeout 60 solar analyze`` ran on for ten minutes)."""
from __future__ import annotations

import os
import signal

import dagster as dg
import pytest

from solar_assets.dagster_defs.instance import raise_if_interrupted


@dg.op
def _told_to_stop() -> None:
    os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C delivers; Dagster maps SIGTERM to it too
    signal.pause()


@dg.op
def _fails() -> None:
    raise ValueError("an ordinary failure")


def _run(op: dg.OpDefinition) -> dg.ExecuteInProcessResult:
    job = dg.GraphDefinition(name=f"job{op.name}", node_defs=[op]).to_job()
    return job.execute_in_process(instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)


def test_an_interrupted_run_raises_keyboard_interrupt_and_a_failed_one_does_not():
    interrupted = _run(_told_to_stop)
    assert not interrupted.success
    with pytest.raises(KeyboardInterrupt, match="interrupted"):
        raise_if_interrupted(interrupted)
    failed = _run(_fails)
    assert not failed.success
    raise_if_interrupted(failed)  # an ordinary failure is the caller's to report
