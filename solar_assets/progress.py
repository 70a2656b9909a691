"""Progress events: "this workload entered this stage", for whoever listens in this process.

The CLI's progress lines, the worker pool's last-event record (a killed worker's result says
which stage it was in) and the Dagster runner all subscribe here; the stages only announce.
At the bottom of the package (no stage imports), so the worker pool can listen without
importing the chain that starts it."""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

logger = logging.getLogger(__name__)

Listener = Callable[[str, str], None]
FINISHED = "finished"  # the stage a caller announces when a file's result landed (the progress count)
UNCHANGED = "unchanged since the last call"  # answered by its record: no work, out of the ETA
_listeners: list[Listener] = []


@contextlib.contextmanager
def progress_listener(callback: Listener) -> Iterator[None]:
    """Call ``callback(workload, stage)`` when a stage starts (in this process, Dagster or not)."""
    _listeners.append(callback)
    try:
        yield
    finally:
        _listeners.remove(callback)


def starting(workload: str, stage: str) -> None:
    """Announce that ``workload`` enters ``stage`` ("trace", "golden at BATCH=3", "bounds H100_SXM" …)."""
    logger.debug("%s: %s", workload, stage)
    for callback in list(_listeners):
        callback(workload, stage)
