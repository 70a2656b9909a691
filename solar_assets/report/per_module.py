"""The per-op breakdown rolled up by module: FlopCounterMode's per-module tree, with bytes, time
and parameters beside the MACs.

Each framework op counts in every module on its path (``features`` and ``features.1`` for an op
of ``features.1``), the whole model at depth 0; a module's figures are the sums over those ops:
MACs and FLOPs exact, bytes the ops' one-kernel traffic (unfused, as the per-op table), time the
ops' unfused roofline times, parameters those its ops read (``PerOpRow.params``: each counted at
its first reading op). A path splits at ``.`` (torch's module paths) or ``/`` (JAX name stacks);
a module's class is the one the ops' scopes name (an ``nn.ModuleList`` that never runs itself
has none, nor has a JAX module). Plain functions of the per-op rows: the CLI, the report files and the UI share them.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from ir_schemas import ModuleRow, PerOpRow

PER_MODULE_STEM = "per_module"
COLUMNS = tuple(ModuleRow.model_fields)
_SPLIT = re.compile(r"[./]")
Row = TypeVar("Row", PerOpRow, ModuleRow)


def by_pair(rows: Sequence[Row]) -> dict[tuple[str, str], list[Row]]:
    """``rows`` (per-op or per-module) grouped by (workload, hardware), in first-seen order."""
    blocks: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        blocks.setdefault((r.workload, r.hardware), []).append(r)
    return blocks


def module_label(path: str, cls: str) -> str:
    """``features.1 (ReLU)``; the model itself ``(Model)``; ``-`` when neither is known."""
    if path and cls:
        return f"{path} ({cls})"
    return path or (f"({cls})" if cls else "-")


def tree_label(m: ModuleRow) -> str:
    """A module of the tree as printed: ``features.1 (ReLU)``, the model ``(model: Model)``."""
    if m.depth:
        return module_label(m.module, m.module_class)
    return f"(model{': ' + m.module_class if m.module_class else ''})"


def path_prefixes(module: str) -> list[str]:
    """``'features.1'`` -> ``['', 'features', 'features.1']`` ('' the model, then each enclosing module)."""
    return list(_prefixes(module))


@functools.lru_cache(maxsize=1 << 16)
def _prefixes(module: str) -> tuple[str, ...]:
    """``path_prefixes`` memoised: the same module paths recur in every part's block of a workload
    (97,602 per-op rows of KernelBench on six parts, each split into its enclosing modules)."""
    if not module:
        return ("",)
    cuts = [m.start() for m in _SPLIT.finditer(module)]
    return ("", *(module[:c] for c in cuts), module)


def module_rollup(rows: Sequence[PerOpRow], depth: int | None = None) -> list[ModuleRow]:
    """The module tree of each workload × hardware in ``rows`` down to ``depth`` (None: every
    depth), each module after its parent, siblings by time (largest first)."""
    out: list[ModuleRow] = []
    for (workload, hardware), block in by_pair(rows).items():
        classes = {path: cls for scope in dict.fromkeys(r.scope for r in block)
                   for path, cls in scope_classes(scope) if cls}
        classes.update({r.module: r.module_class for r in block if r.module_class})
        root = _root(block)
        if root:
            classes.setdefault(root, root)

        def chain(module: str) -> tuple[str, ...]:
            return _prefixes(module)[1:] if root else _prefixes(module)

        sums: dict[str, list] = {}
        for r in block:
            for path in chain(r.module):
                s = sums.setdefault(path, [0, 0, 0, 0, 0, 0.0])
                s[0] += 1
                s[1] += r.macs
                s[2] += r.flops
                s[3] += r.bytes
                s[4] += r.params
                s[5] += r.time_s
        total = sums.get(root, [0, 0, 0, 0, 0, 0.0])[5]
        made = {path: ModuleRow(workload=workload, hardware=hardware, module=path, module_class=classes.get(path, ""),
                                depth=len(chain(path)) - 1, ops=s[0], macs=s[1], flops=s[2], bytes=s[3],
                                params=s[4], time_s=s[5], share=s[5] / total if total > 0 else 0.0)
                for path, s in sums.items()}
        children: dict[str, list[str]] = {}
        for path in made:
            if path != root:
                children.setdefault(chain(path)[-2], []).append(path)

        def walk(path: str) -> None:
            if depth is not None and made[path].depth > depth:
                return
            out.append(made[path])
            for child in sorted(children.get(path, ()), key=lambda c: (-made[c].time_s, c)):
                walk(child)

        walk(root)
    return out


def scope_classes(scope: str) -> list[tuple[str, str]]:
    """``PerOpRow.scope`` as (path, class) pairs, outermost first."""
    return [tuple(entry.split("=", 1)) for entry in scope.split(";") if "=" in entry]  # type: ignore[misc]


def _root(block: Sequence[PerOpRow]) -> str:
    """The model's own path: '' (torch's module paths are relative to it), or the first name all
    of a JAX name stack's paths share (linen and nnx start each with the model: ``Model/Dense_0``)."""
    firsts = {_SPLIT.split(r.module, 1)[0] for r in block}
    if len(firsts) == 1 and all(r.module for r in block) and all("/" in r.module or r.module in firsts for r in block):
        return firsts.pop()
    return ""


def format_per_module(rows: Sequence[ModuleRow], markdown: bool = False) -> str:
    """The tree as text, one block per workload × hardware, each module indented under its parent."""
    from solar_assets.report.table import clip_left, format_bytes, format_count, format_seconds, render_columns

    def name(r: ModuleRow) -> str:
        return "  " * r.depth + clip_left(tree_label(r), 48)

    columns = (
        ("module", name, "<"),
        ("ops", lambda r: str(r.ops), ">"),
        ("MACs", lambda r: format_count(r.macs), ">"),
        ("FLOPs", lambda r: format_count(r.flops), ">"),
        ("bytes unfused", lambda r: format_bytes(r.bytes), ">"),
        ("params", lambda r: format_count(r.params), ">"),
        ("time unfused", lambda r: format_seconds(r.time_s), ">"),
        ("share", lambda r: f"{100 * r.share:.1f} %", ">"),
    )
    out = []
    for (workload, hardware), block in by_pair(rows).items():
        out.append(("### " if markdown else "") + f"{workload} on {hardware}: by module")
        if markdown:
            out.append("")
        out.append(render_columns(block, columns, markdown))
        out.append("")
    return "\n".join(out).rstrip("\n")


def write_per_module_csv(rows: Sequence[ModuleRow], path: str | Path) -> str | Path:
    """``per_module.csv``: one line per module of each workload × hardware, every depth."""
    import pandas as pd

    pd.DataFrame([r.to_dict() for r in rows], columns=list(COLUMNS)).to_csv(path, index=False)
    return path
