"""Where the IR steps lowered from an exported fx node come from (``ir_schemas.Origin``): the node,
its op, its module path, the user's line and the op the user's eager run calls. Its own module so
that a lowering that walks a sub-graph (``torch_lowering.control``) tags its steps as the tracer does.
"""
from __future__ import annotations

import functools
import os
import re
from typing import Any

from ir_schemas import Origin
from solar_assets.workloads.torch_training import PHASE_KEY


CALL_META = "solar_call"
"""An exported node's ``meta`` entry in a one-trace export (``export_speed.export_decomposed``):
``(name, op)`` of the user's call it was decomposed from, what the two traces' ``from_node``
provenance says (``user_call``)."""


def op_name(target: Any) -> str:
    """``aten.convolution.default`` for an ATen overload, ``_operator.getitem`` for a Python callable."""
    if hasattr(target, "overloadpacket") or hasattr(target, "_schema"):
        return str(target)
    name = getattr(target, "__name__", None)
    return f"{getattr(target, '__module__', '') or ''}.{name}".lstrip(".") if name else str(target)


def node_origin(node: Any) -> Origin:
    """The origin of the steps lowered from one exported-graph node: its fx name (unique in the
    graph), its op, the ``nn_module_stack`` (each module's qualified path and class; the
    innermost path is ``module``) and the user's line of the call (``user_line``)."""
    scope = []
    for entry in (node.meta.get("nn_module_stack") or {}).values():
        if isinstance(entry, (tuple, list)) and len(entry) >= 2:
            cls = entry[1] if isinstance(entry[1], str) else getattr(entry[1], "__qualname__", str(entry[1]))
            scope.append((str(entry[0]), cls.rsplit(".", 1)[-1]))
    module = scope[-1][0] if scope else ""
    call, call_op = user_call(node)
    phase = str((node.meta.get("custom") or {}).get(PHASE_KEY, ""))
    return Origin(node=node.name, op=op_name(node.target), module=module, scope=tuple(scope),
                  source=user_line(node.meta.get("stack_trace") or ""), call=call, call_op=call_op, phase=phase)


def user_call(node: Any) -> tuple[str, str]:
    """(name, op) of the exported node ``node`` was decomposed from (the oldest entry of its
    ``from_node`` provenance: ``linear`` for the ``addmm`` of an ``nn.Linear``), which is the op the
    user's eager run calls and a profile of it records; the node itself when it has no provenance."""
    marked = node.meta.get(CALL_META)  # a one-trace export's (``export_speed.export_decomposed``)
    if marked is not None:
        return marked
    sources = node.meta.get("from_node") or ()
    source = None
    while sources:
        source = sources[-1]
        sources = getattr(source, "from_node", None) or ()
    if source is None or not getattr(source, "name", ""):
        return node.name, op_name(node.target)
    return str(source.name), str(getattr(source, "target", "") or "")


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def user_line(stack_trace: str) -> str:
    """``model.py:42``: the innermost frame of an fx node's ``stack_trace`` outside torch and solar
    (an ``nn.Linear`` call is the user's ``self.fc(x)``, not ``linear.py``'s ``F.linear``); '' when none."""
    skip = _library_dirs()
    frames = [(f, int(n)) for f, n in _FRAME.findall(stack_trace) if not f.startswith(skip)]
    return f"{os.path.basename(frames[-1][0])}:{frames[-1][1]}" if frames else ""


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    import torch

    solar_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # solar_assets/, not imported
    return tuple(d + os.sep for d in (os.path.dirname(torch.__file__), solar_dir))
