"""Asset values where Dagster's ``FilesystemIOManager`` (``base_dir=$SOLAR_HOME/storage``) keeps
them, so a value a worker computed is what a Dagster run, the report and the UI load."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

from solar_assets.asset_compute.keys import Partition
from solar_assets.cache_store import note_written
from solar_assets.stage_clock import clocked

PICKLE_PROTOCOL = 4  # as Dagster's filesystem IO manager writes


def storage_path(home: str | Path, partition: Partition) -> Path:
    """``<asset>/<partition>``, a multi-partition as its dimension values in dimension-name order."""
    tail = "/".join(v for _, v in partition.dims) if partition.dims else (partition.key or "")
    return Path(home) / "storage" / partition.asset / tail if tail else Path(home) / "storage" / partition.asset


def stored_form(value: object) -> object:
    """What an asset value is kept as: itself, but golden values over their cap as their digest and
    recipe (``golden.recipe``): no stored value holds large tensors."""
    from solar_assets.golden import Golden

    if isinstance(value, Golden):
        from solar_assets.golden.recipe import stored_golden

        return stored_golden(value)
    return value


@clocked("recording")
def store_value(home: str | Path, partition: Partition, value: object) -> None:
    """``stored_form(value)`` where Dagster's IO manager reads it."""
    value = stored_form(value)
    path = storage_path(home, partition)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as f:
        pickle.dump(value, f, PICKLE_PROTOCOL)
    os.replace(tmp, path)  # a reader never sees half a pickle
    note_written(path)


def load_value(home: str | Path, partition: Partition) -> object:
    with storage_path(home, partition).open("rb") as f:
        return pickle.load(f)


def file_version(path: Path) -> tuple[str, int, int]:
    """``(path, mtime_ns, size)``: what a per-process cache of a parsed file is keyed by, so an
    edited file is read again (0, 0 for a missing one)."""
    stat = path.stat() if path.is_file() else None
    return str(path), stat.st_mtime_ns if stat else 0, stat.st_size if stat else 0


@clocked("recording")
def write_events(path: Path, events: list) -> None:
    """A worker's partition events, logged by the call's step (``dagster_defs.step_events``)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as f:
        pickle.dump(list(events), f, PICKLE_PROTOCOL)
    os.replace(tmp, path)
    note_written(path)


def read_events(path: str | Path) -> list:
    with Path(path).open("rb") as f:
        return pickle.load(f)
