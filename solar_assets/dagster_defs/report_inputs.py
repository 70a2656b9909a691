"""How ``headroom_report`` reads the partitioned assets it tabulates: every stored partition, and
nothing said about the ones never materialised.

Dagster's filesystem IO manager, asked for all partitions of an input, logs "Couldn't load
partition" for each missing one as an event of the run (one SQLite write each) and hands over a
bare value when exactly one exists. ``measured_runtime`` has four backend partitions per workload
and ``inverse_roofline`` exists only with a target latency, so a report of 100 workloads wrote ~500
such events (~19 ms each on this machine; bench/dagster_overhead.py). This input manager reads the
values where the IO manager stored them (``asset_compute.storage``) and always returns
``{partition key: value}``.
"""
from __future__ import annotations

import pickle
from pathlib import Path

import dagster as dg

STORED_PARTITIONS = "stored_partitions"
"""The resource key of the input manager (``dg.AssetIn(input_manager_key=...)``)."""


class StoredPartitions(dg.ConfigurableIOManager):
    """Reads every stored partition of an input; writes nothing (the assets' outputs keep the
    filesystem IO manager)."""

    base_dir: str

    def _path(self, asset: dg.AssetKey, key: str | dg.MultiPartitionKey) -> Path:
        if isinstance(key, dg.MultiPartitionKey):
            parts = [v for _, v in sorted(key.keys_by_dimension.items())]
        else:  # a multi-partition key as a string joins its dimensions in name order with "|"
            parts = str(key).split("|")
        return Path(self.base_dir, *asset.path, *parts)

    def load_input(self, context: dg.InputContext) -> dict[str, object]:
        out: dict[str, object] = {}
        keys = context.asset_partition_keys if context.has_asset_partitions else []
        for key in keys:
            path = self._path(context.asset_key, key)
            if path.is_file():
                with path.open("rb") as f:
                    out[str(key)] = pickle.load(f)
        return out

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        raise NotImplementedError("stored_partitions only reads: the assets store through the io_manager")
