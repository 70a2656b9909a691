"""Did a workload replace part of the frameworks or of solar? Identities before and after one file.

A workload file is Python run in the worker: ``torch.matmul = lambda *a: ...`` or a patched
``solar_assets.validate.compare._check_one`` would change its own golden outputs or verdict, and,
in the same process, every later file's. Restoring what it replaced is not enough (it may have
kept a reference, or patched what the snapshot does not see), so a worker whose file replaced
anything is retired, that file's result is refused as untrusted and what it wrote to the caches
is deleted (``pool``). The snapshot is the identity of every public callable of the frameworks'
main namespaces and of the standard-library modules solar computes with (``math``, ``builtins``,
``functools`` ...: the next file's bounds are computed in the same worker), the own methods of
every public class there (``nn.Linear.forward = ...``; ``torch.Tensor``, ``torch.nn.Module``), and
every callable of every loaded ``solar_assets`` / ``ir_schemas`` module: about a hundred thousand
``id`` calls, milliseconds. Data mutated in place (a tolerance table's entry) has no identity to
compare: the verdict is reached in the checker process (``checker``), which never imported the file.
"""
from __future__ import annotations

import sys
from typing import Any

FRAMEWORK_MODULES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.export",
    "torch.fx", "torch.nn.init", "torch._ops", "numpy", "numpy.linalg", "numpy.fft", "numpy.random", "scipy.special",
    "scipy.linalg", "jax", "jax.numpy", "jax.lax", "jax.nn", "jax.random", "jax.scipy.special", "flax.linen", "numba",
    # what solar computes its bounds, keys and verdicts with, in the same worker, for the next file
    "builtins", "math", "operator", "functools", "itertools", "hashlib", "json", "pickle", "copy", "os", "os.path",
    "re", "struct", "statistics",
)
SOLAR_PREFIXES = ("solar_assets", "ir_schemas")
CLASSES = (("torch", "Tensor"), ("torch.nn", "Module"))

Snapshot = dict[tuple[str, str], int]


def _attributes(namespace: dict[str, Any], private: bool) -> dict[str, int]:
    """The callables (functions, classes, methods) of a namespace: what a patch replaces; data (a
    module's cache dict, a flag) is rebound by the code itself and not judged."""
    return {name: id(value) for name, value in list(namespace.items())
            if (private or not name.startswith("_")) and (callable(value) or isinstance(value, (staticmethod,
                                                                                                 classmethod)))}


def snapshot() -> Snapshot:
    """``(module, attribute) -> id`` of what a workload could replace, for the modules loaded now."""
    out: Snapshot = {}
    modules = dict(sys.modules)
    for name in FRAMEWORK_MODULES:
        module = modules.get(name)
        if module is not None:
            for attr, ident in _attributes(vars(module), False).items():
                out[(name, attr)] = ident
    for name, module in modules.items():
        if module is not None and name.split(".", 1)[0] in SOLAR_PREFIXES:
            for attr, ident in _attributes(vars(module), True).items():
                out[(name, attr)] = ident
    classes = {(m, c): getattr(modules.get(m), c, None) for m, c in CLASSES}
    for name in FRAMEWORK_MODULES:  # their public classes' own methods: ``nn.Linear.forward = ...``
        module = modules.get(name)
        if module is not None:
            for attr, value in list(vars(module).items()):
                if isinstance(value, type) and not attr.startswith("_"):
                    classes.setdefault((name, attr), value)
    for (module_name, cls_name), cls in classes.items():
        if cls is not None:
            for attr, ident in _attributes(dict(vars(cls)), True).items():
                out[(f"{module_name}.{cls_name}", attr)] = ident
    return out


def replaced(before: Snapshot) -> list[str]:
    """The attributes whose object changed (or vanished) since ``before``, as ``torch.matmul``; an
    attribute a module gained is not judged (a lazy import fills a namespace)."""
    now = snapshot()
    return sorted(f"{module}.{attr}" for (module, attr), ident in before.items() if now.get((module, attr)) != ident)
