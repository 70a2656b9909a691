"""The tracer's last fake-tensor exports in this process, so that node-wise validation runs the
very graph the IR was lowered from on real values, instead of exporting the model a second time.

Node-wise validation needs the exported graph, the tracer's program of it and the value map (IR
tensor -> fx node), and it runs that graph on the file's real inputs and weights. It exported the
model again on real tensors for that: KernelBench's BigBird at sequence length 4095 spent 31 s of
its 166 s there, after the translation had exported the same model on fake tensors in the same
worker a minute before. A fake-tensor export's graph holds shapes only; its parameters, buffers and
tensor attributes are the model's, by name (``ExportedProgram.graph_signature``), so the real
model built from the same seed gives their values (``with_real_state``); a constant made inside
``forward`` is lifted with its real value even on fake tensors (``torch_tracer.lifted_constant``).

Only an export traced on fake tensors is kept (a real-tensor one would keep a full-size model's
weights alive between the stages), only for the plain tracer's lowering (an agent fallback's
program is not the export's own lowering), keyed by the file's path, its content digest and the
constants rebound: the last full-size one (the sizing search's traces do not push it out) and the
last ``SCALED_KEPT`` at a scaled size (where a pass at full size does not fit).
"""
from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ir_schemas import Program

log = logging.getLogger(__name__)

SCALED_KEPT = 2


@dataclass(frozen=True)
class RememberedExport:
    """A fake-tensor export, the tracer's program of it and its value map."""

    ep: Any
    program: Program
    values: Mapping[str, str]


_last: OrderedDict[tuple, RememberedExport] = OrderedDict()


def _key(path: Any, sha256: str, constants: Mapping[str, int] | None) -> tuple:
    return str(path), sha256, tuple(sorted((constants or {}).items()))


def remember(path: Any, sha256: str, constants: Mapping[str, int] | None, ep: Any, program: Program,
             values: Mapping[str, str]) -> None:
    key = _key(path, sha256, constants)
    _last.pop(key, None)
    _last[key] = RememberedExport(ep, program, dict(values))
    full = [k for k in _last if not k[2]]
    scaled = [k for k in _last if k[2]]
    for old in full[:-1] + scaled[:-SCALED_KEPT]:
        del _last[old]


def recall(path: Any, sha256: str, constants: Mapping[str, int] | None) -> RememberedExport | None:
    return _last.get(_key(path, sha256, constants))


def forget() -> None:
    _last.clear()


@dataclass
class RealStateProgram:
    """What a pass over an exported graph reads of an ``ExportedProgram`` (``golden.capture``), with
    the state's values taken from a real model."""

    graph_module: Any
    graph_signature: Any
    state_dict: dict[str, Any] = field(default_factory=dict)
    constants: dict[str, Any] = field(default_factory=dict)

    @property
    def graph(self) -> Any:
        return self.graph_module.graph


def with_real_state(ep: Any, model: Any) -> RealStateProgram | None:
    """``ep``'s graph with each parameter, buffer and tensor attribute read from ``model`` by its
    name, and each constant lifted from ``forward`` as ``ep`` holds it; None where a value is not
    found on ``model``, is fake, or differs from the export's in shape or dtype."""
    import torch
    from torch._subclasses.fake_tensor import is_fake
    from torch.export.graph_signature import InputKind

    out = RealStateProgram(ep.graph_module, ep.graph_signature)
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            continue
        exported = ep.state_dict[spec.target] if spec.target in ep.state_dict else ep.constants.get(spec.target)
        value = _attribute(model, spec.target)
        if value is None:  # not the model's: a constant made in forward, real even on fake tensors
            value = exported
        if not isinstance(value, torch.Tensor) or is_fake(value) or not isinstance(exported, torch.Tensor) \
                or tuple(value.shape) != tuple(exported.shape) or value.dtype != exported.dtype:
            log.debug("%s: no real value of the same shape and dtype on the model", spec.target)
            return None
        (out.state_dict if spec.target in ep.state_dict else out.constants)[spec.target] = value
    return out


def _attribute(model: Any, target: str) -> Any:
    """``model``'s tensor at the dotted name ``target`` (a parameter, a buffer or an attribute)."""
    value = model
    for part in target.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value
