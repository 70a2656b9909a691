"""The UI pictures of a worker's partitions, drawn beside the CLI's main thread while the work goes on.

A per-pair roofline and an einsum graph cost ~0.3–0.5 s of a small workload's ~0.5 s of bounds
(bench/dagster_overhead.py), in a worker that computes one file after another; drawn here, from
the values the worker stored, they overlap the next file's work. The same functions draw them
inside a regular Dagster step (``workload.graph_picture``, ``bounds.roofline_picture``), so a
picture is the same whichever path made it.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import multiprocessing
from pathlib import Path

from solar_assets.asset_compute.keys import Partition, PartitionEvent
from solar_assets.asset_compute.metadata import Metadata, Text
from solar_assets.asset_compute.settings import AssetSettings
from solar_assets.asset_compute.storage import load_value, read_events, write_events

log = logging.getLogger(__name__)


def pictures_for(event: PartitionEvent, settings: AssetSettings) -> Metadata:
    """The picture entries of a materialised ``einsum_graph`` or ``sol_bounds`` partition, drawn
    from its stored value (and the workload's graph and source)."""
    from solar_assets.asset_compute.bounds import per_op_or_why, roofline_picture
    from solar_assets.asset_compute.workload import graph_picture

    p = event.partition
    if p.asset == "einsum_graph":
        source = load_value(settings.home, Partition("workload_source", p.key))
        return graph_picture(load_value(settings.home, p), source.name, settings)
    if p.asset == "sol_bounds":
        dims = dict(p.dims)
        bounds_row = load_value(settings.home, p)
        graph = load_value(settings.home, Partition("einsum_graph", dims["workload"]))
        row = bounds_row.row
        return roofline_picture(row, per_op_or_why(row.workload, graph, bounds_row.bounds, row.hardware), settings)
    return {}


def with_pictures(events: list[PartitionEvent], settings: AssetSettings, assets: tuple[str, ...]) -> list[PartitionEvent]:
    """``events`` with the pictures of the materialised partitions of ``assets`` added to their
    metadata; a picture that cannot be drawn says why in its entry (the values stand)."""
    out = []
    for event in events:
        if event.error is None and not event.observation and event.partition.asset in assets:
            try:
                extra = pictures_for(event, settings)
            except Exception as e:  # a picture is a nicety: record why it is missing
                log.debug("no picture for %s[%s]", event.partition.asset, event.partition.key, exc_info=True)
                name = "graph" if event.partition.asset == "einsum_graph" else "roofline"
                extra = {name: Text(f"no picture: {type(e).__name__}: {e}")}
            event = dataclasses.replace(event, metadata={**event.metadata, **extra})
        out.append(event)
    return out


NOT_DRAWN = "not drawn by `solar analyze` (add --pictures), or materialise this partition in the UI"


def not_drawn(events: list[PartitionEvent], assets: tuple[str, ...]) -> list[PartitionEvent]:
    """``events`` with an entry saying how to get the picture a call did not draw: a person looks
    at the report's charts, and at few partitions' own (docs/cold_path.md: a tenth of a cold call)."""
    out = []
    for event in events:
        if event.error is None and not event.observation and event.partition.asset in assets:
            name = "graph" if event.partition.asset == "einsum_graph" else "roofline"
            event = dataclasses.replace(event, metadata={**event.metadata, name: Text(NOT_DRAWN)})
        out.append(event)
    return out


def draw_file(path: Path, settings: AssetSettings, assets: tuple[str, ...]) -> None:
    """Rewrite the events file at ``path`` with the pictures of its partitions of ``assets``."""
    try:
        if path.is_file():
            write_events(path, with_pictures(read_events(path), settings, assets))
    except Exception:  # the events stand without their pictures
        log.warning("%s: the pictures could not be drawn", path, exc_info=True)


class Pictures:
    """Draws the deferred pictures of each events file handed to ``submit`` (rewritten in place),
    one file after another; ``wait`` for one file, ``join`` for all.

    ``own_process``: in a spawned process of their own, for a call whose main thread is busy
    meanwhile (bounds alone, then logging the events): in a thread they took its GIL, and 100
    pictures (~6 s of CPU) then logging were drawn one after the other (bench/dagster_overhead.py,
    spec edit). Else in a thread: the main thread waits on the workers, which draw nothing."""

    def __init__(self, settings: AssetSettings, assets: tuple[str, ...], own_process: bool = False):
        self.settings, self.assets = settings, assets
        self._executor: concurrent.futures.Executor = (
            concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            if own_process else concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="solar-pictures"))
        self._drawn: dict[Path, concurrent.futures.Future] = {}

    def submit(self, events_file: Path) -> None:
        if not self.assets:  # nothing to draw (a call without --pictures): the file is not rewritten
            return
        self._drawn[Path(events_file)] = self._executor.submit(draw_file, Path(events_file), self.settings, self.assets)

    def wait(self, events_file: Path) -> None:
        """Until the pictures of ``events_file`` are drawn (at once if it was never submitted)."""
        future = self._drawn.get(Path(events_file))
        if future is not None:
            try:
                future.result()
            except Exception:  # the process died: the events stand without their pictures
                log.warning("%s: the pictures could not be drawn", events_file, exc_info=True)

    def join(self) -> None:
        for path in list(self._drawn):
            self.wait(path)
        self._executor.shutdown(wait=True)
