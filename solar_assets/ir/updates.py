"""Outputs that are an input's or a buffer's storage after ``forward`` updated it in place.

Eager PyTorch updates tensors in place (``x.mul_(2)``, ``self.cache[:, pos] = k``, BatchNorm's
running statistics in train mode). ``torch.export`` turns each update into a functional value and
an extra graph output; the IR keeps it as an output whose declaration binds
``updates:<binding of the tensor it updates>``. Such an output *is* that tensor's storage: it holds
the tensor's values before any step writes it, so a kernel that writes only part of it (one
decode position of a KV cache, under a ``where`` condition) leaves the rest as it was, as the
eager write does. Validation compares it with the tensor's value after the framework's call;
the cost model charges the elements the program writes, and reads of the elements it did not
write as reads of the updated tensor (``solar_assets.graph.einsum_graph``).
"""
from __future__ import annotations

from ir_schemas import Program, TensorDecl

UPDATES_PREFIX = "updates:"


def updates_binding(target: str) -> str:
    """The output binding that says "this is ``target``'s storage after the call"."""
    return UPDATES_PREFIX + target


def updated_target(decl: TensorDecl) -> str | None:
    """The binding (``input:0``, ``buffer:cache``) an output updates in place, else None."""
    if decl.role == "output" and decl.binding and decl.binding.startswith(UPDATES_PREFIX):
        return decl.binding[len(UPDATES_PREFIX):]
    return None


def updated_sources(program: Program) -> dict[str, str]:
    """Each updating output -> the input or weight tensor whose storage it is (checked programs
    declare exactly one such tensor per binding)."""
    by_binding = {t.binding: t.name for t in program.tensors if t.role in ("input", "weight") and t.binding}
    out = {}
    for t in program.tensors:
        target = updated_target(t)
        if target is not None and target in by_binding:
            out[t.name] = by_binding[target]
    return out
