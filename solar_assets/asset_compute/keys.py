"""Partition keys and asset partitions as plain data (no Dagster: the CLI derives keys before it
imports Dagster, and the workers never import it).

A workload's partition key is derived from its path (``workload_key``): the file's stem for a file
in the configured workload dir (``data/workloads``: ``gemm``), else the stem after the shortest
suffix of its directories that no other file of the home holds (``level2.12_Gemm_Multiply_LeakyReLU``,
then ``KernelBench.level2.12_Gemm…`` for a second ``level2``), so ``other/gemm.py`` never takes over
the shipped ``gemm``'s history and a key reads as where the file is. A dot joins the parts: a
slash would nest the stored values' directories. Which file holds a key is the home's registry
(``workload_paths``); a key once given stays that file's. Characters Dagster rejects in a key (``|``, ``,``, ``[``, ``]``, control
characters, ``...``) and ``%`` are escaped as ``%XX`` (``pipe%7Cname``).
"""
from __future__ import annotations

import dataclasses
import hashlib
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from solar_assets.asset_compute.metadata import Metadata
from solar_assets.workloads.training import LOSSES, TrainSpec

_KEY_RESERVED = set("|,[]%")
KEY_STEM_BYTES = 96  # a longer stem is cut and hashed: the key is a file name under storage/  # Dagster's multi-partition separator and range syntax, and the escape


def escape_key(text: str) -> str:
    """``text`` as a valid Dagster partition key: reserved and control characters as ``%XX``
    (UTF-8 bytes), and a dot that would make ``...`` likewise; everything else kept."""
    out: list[str] = []
    for char in text:
        if char in _KEY_RESERVED or unicodedata.category(char).startswith("C") or \
                (char == "." and len(out) >= 1 and out[-1] == "."):
            out.append("".join(f"%{b:02X}" for b in char.encode("utf-8")))
        else:
            out.append(char)
    return "".join(out)


def workload_key(path: str | Path, workload_dir: str | Path, taken: Mapping[str, str] | None = None) -> str:
    """The partition key of a workload file: its escaped stem when it lies directly in
    ``workload_dir``, else ``<dir>.<stem>`` with as many of its directories (innermost last) as
    make it a key no other file holds in ``taken`` (``key -> resolved path``: the home's
    registry); the key ``taken`` already gives the file, when it gives one. Beyond every
    directory, ``<stem>@<8 hex digits of its resolved path>``."""
    from solar_assets.paths import file_stem

    path = Path(path)
    resolved = path.resolve()
    stem = escape_key(path.stem)
    stem = stem if len(stem.encode()) <= KEY_STEM_BYTES else file_stem(stem, KEY_STEM_BYTES)
    if resolved.parent == Path(workload_dir).resolve():
        return stem
    taken = taken or {}
    mine = str(resolved)
    given = next((key for key, holder in taken.items() if holder == mine and key != stem
                  and split_train_key(key)[1] is None), None)  # a file's key, never its training step's
    if given is not None:
        return given
    dirs = resolved.parent.parts[1:]
    for n in range(1, len(dirs) + 1):
        key = escape_key(".".join(dirs[-n:]).rstrip(".")) + "." + stem
        if len(key.encode()) > 2 * KEY_STEM_BYTES:
            break
        if taken.get(key, mine) == mine:
            return key
    return f"{stem}@{hashlib.sha256(mine.encode()).hexdigest()[:8]}"


TRAIN_KEY_MARK = "@train"


def train_key(key: str, spec: TrainSpec | None) -> str:
    """The partition key of a workload's training step (``solar analyze --train``): its own
    partition, so a step and the forward pass of one file keep their own histories and bounds
    (``gemm@train``, ``level2.12_Gemm@train:sgd``); ``key`` itself without a spec."""
    return key if spec is None else f"{key}@{spec.label}"


def split_train_key(key: str) -> tuple[str, TrainSpec | None]:
    """``train_key`` undone: the file's key and the training step's spec (None for a forward pass)."""
    base, mark, label = key.rpartition(TRAIN_KEY_MARK)
    if not mark or not base or (label and not label.startswith(":")):
        return key, None
    optimizer, _, loss = label.removeprefix(":").partition(",")
    parts = [p for p in (optimizer, loss) if p]
    spec = TrainSpec()
    for part in parts:  # the label names only what differs from the default (TrainSpec.label)
        spec = dataclasses.replace(spec, **({"loss": part} if part in LOSSES else {"optimizer": part}))
    return base, spec


@dataclasses.dataclass(frozen=True)
class Partition:
    """An asset partition: the key as Dagster prints it, and the dimensions of a multi-partition
    (in dimension-name order, as Dagster joins them: ``H100_SXM|gemm``)."""

    asset: str
    key: str | None
    dims: tuple[tuple[str, str], ...] = ()

    @classmethod
    def multi(cls, asset: str, dims: Mapping[str, str]) -> Partition:
        ordered = tuple(sorted(dims.items()))
        return cls(asset, "|".join(v for _, v in ordered), ordered)

    @classmethod
    def pair(cls, asset: str, workload: str, hardware: str) -> Partition:
        """A ``workload`` × ``hardware`` partition (``sol_bounds`` and the other bound assets)."""
        return cls.multi(asset, {"workload": workload, "hardware": hardware})


@dataclasses.dataclass(frozen=True)
class PartitionEvent:
    """What became of one asset partition in a worker: materialised (``data_version`` set) or
    failed (``error``; ``upstream_failed`` when an input's asset failed before it)."""

    partition: Partition
    code_version: str | None
    parents: tuple[Partition, ...] = ()
    data_version: str | None = None
    metadata: Metadata = dataclasses.field(default_factory=dict)
    error: str | None = None
    upstream_failed: bool = False
    observation: bool = False  # a source file's hash (``workload_file`` / ``hardware_file``)
