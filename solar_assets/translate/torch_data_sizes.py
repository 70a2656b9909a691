"""The sizes a PyTorch program's values decide, taken at the sample's values.

``torch.export`` gives the length of ``nonzero``'s or ``masked_select``'s result as an unbacked
symbol (``u0``): the IR's shapes are static, so the tracer runs the exported program once on the
file's own seeded inputs (the very inputs the golden run uses: ``load_torch_workload`` seeds them,
and random draws in ``forward`` follow ``deterministic_random`` on both sides) and binds each symbol
to the size that run gave. The IR is then the program at those values, and says so: the
translation's diagnostics and the report row name each size and the op it came from. At a scaled
validation size the IR is traced again at that size, so its sizes are that size's sample's.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from solar_assets.translate.translation import TranslationError

log = logging.getLogger(__name__)

_SPOKEN = {"index": "boolean-mask index", "_unique2": "unique", "_local_scalar_dense": "item"}
"""The ATen names a user would not recognise, as the user wrote them."""

MAX_SAMPLE_BYTES = 4 << 30
"""The largest sample (inputs and weights) run for its data-dependent sizes."""


@dataclass(frozen=True)
class DataSizes:
    """Each data-dependent size's symbol -> its value at the sample, and the op that made it."""

    sizes: dict[str, int]
    ops: dict[str, str]

    def note(self) -> str:
        """``shapes from the sample's values: masked_select 82, nonzero 62``."""
        parts = [f"{self.ops.get(s, s)} {v}" for s, v in sorted(self.sizes.items(), key=lambda kv: _order(kv[0]))]
        return "shapes from the sample's values: " + ", ".join(parts) if parts else ""


def _order(symbol: str) -> tuple[int, str]:
    digits = symbol.lstrip("u")
    return (int(digits) if digits.isdigit() else 1 << 30, symbol)


def _unbacked(value: Any) -> set[Any]:
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    return set(free_unbacked_symbols(value)) if value is not None else set()


def has_data_dependent_sizes(ep: Any) -> bool:
    """Whether some node's shape is an unbacked symbol (a size the values decide)."""
    return any(_unbacked(n.meta.get("val")) for n in ep.graph.nodes if n.op == "call_function")


def data_dependent_sizes(ep: Any, inputs: Sequence[Any], path: str) -> DataSizes:
    """Run ``ep`` (exported with real tensors) on ``inputs`` and bind every unbacked symbol of its
    nodes' shapes to the size the run gave."""
    import torch
    from torch.utils import _pytree

    from solar_assets.workloads.in_forward import deterministic_random

    wanted = {n.name: n for n in ep.graph.nodes if n.op == "call_function" and _unbacked(n.meta.get("val"))}
    seen: dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            out = super().run_node(n)
            if n.name in wanted:
                seen[n.name] = out
            return out

    flat = [x.clone() if isinstance(x, torch.Tensor) else x for x in _pytree.tree_leaves(tuple(inputs))]
    try:
        with torch.no_grad(), deterministic_random():
            Recorder(ep.module()).run(*flat)
    except Exception as e:
        raise TranslationError(f"{path}: running the program on the sample's values, for the sizes its values "
                               f"decide, failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
    sizes: dict[str, int] = {}
    ops: dict[str, str] = {}
    for name, node in wanted.items():
        for symbol in _bind(node.meta["val"], seen.get(name), sizes):
            op = getattr(getattr(node.target, "overloadpacket", None), "__name__", node.name)
            ops.setdefault(symbol, _SPOKEN.get(op, op))
    log.info("%s: %s", path, DataSizes(sizes, ops).note())
    return DataSizes(sizes, ops)


def _bind(meta: Any, real: Any, sizes: dict[str, int]) -> list[str]:
    """Bind the plain symbols of ``meta``'s sizes (a fake tensor, a SymInt, or a tuple of them) to
    ``real``'s; the symbols bound first here."""
    import torch

    if isinstance(meta, (list, tuple)):
        return [s for m, r in zip(meta, real if isinstance(real, (list, tuple)) else ()) for s in _bind(m, r, sizes)]
    pairs = [(meta, real)] if isinstance(meta, torch.SymInt) else \
        list(zip(getattr(meta, "shape", ()), getattr(real, "shape", ())))
    bound = []
    for m, r in pairs:
        expr = getattr(getattr(m, "node", None), "expr", None)
        if expr is not None and expr.is_Symbol and str(expr) not in sizes:
            sizes[str(expr)] = int(r)
            bound.append(str(expr))
    return bound


def sample_bytes(model: Any, inputs: Sequence[Any]) -> int:
    import torch

    tensors = [*model.parameters(), *model.buffers(), *(x for x in inputs if isinstance(x, torch.Tensor))]
    return sum(int(t.numel()) * t.element_size() for t in tensors)
