"""The asset graph, declared once, as plain data: each asset's function, partitioning, inputs, code
version, group and kinds.

Everything that composes the stages is generated from these declarations: the Dagster assets
(``dagster_defs.assets.asset_of`` makes a ``@dg.asset`` of each node: its inputs are the function's
parameters named after assets), the walk of a ``solar analyze`` worker over a file's partitions
(``asset_compute.worker``) and the plain chain of ``--no-dagster``, ``solar.analyze`` and the
bench (``asset_compute.plain.analyze_workload``, the same walk in memory). So the paths cannot
compose the stages differently: a node's inputs are what every path hands it.
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
    group: str = "workload"
    kinds: frozenset[str] = frozenset()
    runs_workload_code: bool = False
    """Whether ``fn`` executes the user's file: a Dagster step runs it in a worker with limits
    (``asset_compute.isolated``); a worker of ``solar analyze`` is one already."""
    on_demand: bool = False
    """Computed only when asked (``solar analyze --ski-slope``, "Materialize" in the UI; once
    materialised, re-analysis keeps it fresh): nothing else reads it, and a person looks at it for
    few workloads. The ski-slope is a tenth of a cold call's work (docs/cold_path.md)."""

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


def _node(fn: Callable[..., Computed], partitioning: Partitioning, group: str, kinds: str,
          sources: tuple[str, ...] = (), runs_workload_code: bool = False, on_demand: bool = False) -> AssetNode:
    versions = {**workload.CODE_VERSIONS, **bounds.CODE_VERSIONS}
    return AssetNode(fn.__name__, fn, partitioning, versions[fn.__name__], sources, group,
                     frozenset(kinds.split()), runs_workload_code, on_demand)


WORKLOAD_NODES = (
    _node(workload.workload_source, "workload", "workload", "python", ("workload_file",)),
    _node(workload.ir_translation, "workload", "workload", "pytorch", runs_workload_code=True),
    _node(workload.golden_outputs, "workload", "workload", "pytorch numpy", runs_workload_code=True),
    _node(workload.ir_validation, "workload", "workload", "numba", runs_workload_code=True),
    _node(workload.einsum_graph, "workload", "workload", "networkx"),
    _node(workload.ski_slope, "workload", "bounds", "pyomo matplotlib", on_demand=True),
)
"""The per-workload assets, in an order that puts each after its inputs."""
HARDWARE_NODE = _node(bounds.hardware_spec, "hardware", "hardware", "yaml", ("hardware_file",))
BOUND_NODES = (
    _node(bounds.cache_aware_bound, "pair", "bounds", "pyomo glpk"),
    _node(bounds.sol_bounds, "pair", "bounds", "pyomo"),
    _node(bounds.inverse_roofline, "pair", "bounds", "python"),
)
"""The per-pair assets, each after its inputs."""
_NAMES = {n.fn.__name__ for n in (*WORKLOAD_NODES, HARDWARE_NODE, *BOUND_NODES)}
NODES = {n.name: n for n in (*WORKLOAD_NODES, HARDWARE_NODE, *BOUND_NODES)}


def workload_nodes(on_demand: bool = False) -> tuple[AssetNode, ...]:
    """The per-workload nodes a call computes: the on-demand ones only when asked."""
    return tuple(n for n in WORKLOAD_NODES if on_demand or not n.on_demand)
