"""The asset graph as plain data: each asset's function, partitioning, inputs and code version.

``dagster_defs.assets`` builds a ``@dg.asset`` over each function (its inputs are the function's
parameters named after assets, as Dagster reads them); ``asset_compute.worker`` walks the same
declarations in a worker without Dagster. ``tests/test_asset_compute.py`` checks that Dagster's
graph (dependencies, partitions, code versions) is exactly this one.
"""
from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Literal

from solar_assets.asset_compute import bounds, workload
from solar_assets.asset_compute.code_versions import code_version
from solar_assets.asset_compute.computed import Computed

Partitioning = Literal["workload", "hardware", "pair"]


@dataclasses.dataclass(frozen=True)
class AssetNode:
    """One asset: ``fn`` computes a partition; ``inputs`` are its parameters that are assets (in
    order), ``sources`` the observed files it depends on without reading them (their hash)."""

    name: str
    fn: Callable[..., Computed]
    partitioning: Partitioning
    packages: tuple[str, ...]
    sources: tuple[str, ...] = ()

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(p for p in inspect.signature(self.fn).parameters if p in _NAMES)

    @property
    def code_version(self) -> str:
        return code_version(*self.packages)

    @property
    def takes_key(self) -> bool:
        """Whether ``fn`` reads its partition key (the assets over a source file)."""
        return "key" in inspect.signature(self.fn).parameters


def _node(fn: Callable[..., Computed], partitioning: Partitioning, sources: tuple[str, ...] = ()) -> AssetNode:
    versions = {**workload.CODE_VERSIONS, **bounds.CODE_VERSIONS}
    return AssetNode(fn.__name__, fn, partitioning, versions[fn.__name__], sources)


WORKLOAD_NODES = (
    _node(workload.workload_source, "workload", ("workload_file",)),
    _node(workload.golden_outputs, "workload"),
    _node(workload.ir_translation, "workload"),
    _node(workload.ir_validation, "workload"),
    _node(workload.einsum_graph, "workload"),
    _node(workload.ski_slope, "workload"),
)
"""The per-workload assets, in an order that puts each after its inputs."""
HARDWARE_NODE = _node(bounds.hardware_spec, "hardware", ("hardware_file",))
BOUND_NODES = (
    _node(bounds.cache_aware_bound, "pair"),
    _node(bounds.inverse_roofline, "pair"),
    _node(bounds.sol_bounds, "pair"),
)
"""The per-pair assets, each after its inputs."""
_NAMES = {n.fn.__name__ for n in (*WORKLOAD_NODES, HARDWARE_NODE, *BOUND_NODES)}
NODES = {n.name: n for n in (*WORKLOAD_NODES, HARDWARE_NODE, *BOUND_NODES)}
