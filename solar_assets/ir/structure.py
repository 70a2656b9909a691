"""A program's structure: one line per tensor and per step with every number normalised away.

Two programs with equal structure differ only in their sizes (and the values they compute with):
what the validation size must keep of the full-size IR (``solar_assets.sizing``), and what
the fewer-layers check of ``solar_assets.workloads.hf_offline`` compares block by block. A
pure function of the IR, so it lives with it, at the bottom.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ir_schemas import Program

_NUMBER = re.compile(r"(?<![\w.])(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _normalised(value: Any) -> Any:
    """Every number (in values and inside expression strings) replaced by '#'."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return "#"
    if isinstance(value, str):
        return _NUMBER.sub("#", value)
    if isinstance(value, Mapping):
        return {k: _normalised(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalised(v) for v in value]
    return value


def _step_line(step: Any, depth: int = 0) -> str:
    if step.kind == "repeat":  # its body follows, one line per step, indented by depth
        return "  " * depth + f"repeat {step.name}: {step.var}<#"
    if step.kind == "cond":  # its branches follow (walk order), their steps at the same depth
        sizes = "/".join(str(len(b)) for b in step.branches)
        return "  " * depth + f"cond {step.name}: switch {step.index} branches of {sizes} steps -> {list(step.outs)}"
    return "  " * depth + _plain_step_line(step)


def _plain_step_line(step: Any) -> str:
    data = step.model_dump(mode="json")
    data.pop("origin", None)  # provenance, not structure (node names may be numbered differently)
    kind, name = data.pop("kind", "?"), data.pop("name", "?")
    if kind == "kernel":
        loops = ", ".join(lp["var"] for lp in data["loops"])
        init = "" if data.get("init", "identity") == "identity" else f" (init {data['init']})"
        return _normalised(f"kernel {name}: for {loops}: {data['out']} {data['update']} {data['expr']}{init}")
    return f"{kind} {name}: " + json.dumps(_normalised(data), sort_keys=True)


def structure_of(program: Program) -> tuple[list[str], list[str]]:
    """(one line per tensor, one line per step) with every number normalised away: what must be
    equal between the IR at full size and at the validation size."""
    tensors = [f"{t.name}: {t.role} {t.dtype} rank {len(t.shape)} binding {t.binding} pad "
               f"{'none' if t.pad_value is None else t.pad_value}" for t in program.tensors]
    extra = [f"inputs {list(program.inputs)}", f"outputs {list(program.outputs)}"]
    return tensors + extra, [_step_line(s, len(enclosing)) for s, enclosing in program.walk_steps()]
