"""The einsum graph stage: each kernel as an extended einsum with exact MACs, FLOPs and bytes."""
from solar_assets.graph.einsum_graph import (
    BYTES_PER_ELEMENT,
    CODE_VERSION,
    FLOAT_DTYPES,
    EinsumGraph,
    EinsumNode,
    Operand,
    build_einsum_graph,
    program_digest,
)
from solar_assets.graph.footprint import (
    Footprint,
    access_footprint,
    indirect_footprint,
    footprint_of,
    touched_elements,
    union_footprint,
)
from solar_assets.graph.op_groups import OpGroup, op_groups

__all__ = [
    "BYTES_PER_ELEMENT", "CODE_VERSION", "FLOAT_DTYPES", "EinsumGraph", "EinsumNode", "Operand",
    "build_einsum_graph", "program_digest",
    "Footprint", "access_footprint", "indirect_footprint", "footprint_of", "touched_elements", "union_footprint",
    "OpGroup", "op_groups",
]
