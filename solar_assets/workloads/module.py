"""Execute a workload file as a fresh module: shared by the PyTorch and the JAX loaders."""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
import types
from pathlib import Path

from solar_assets.errors import SolarError
from solar_assets.workloads.sizes import check_rebindable, rebind_constants
from solar_assets.workloads.source import WorkloadSource


class WorkloadError(SolarError):
    """A workload file that cannot be loaded or run; the message names the file."""


def exec_workload_module(src: WorkloadSource, constants: dict[str, int] | None) -> types.ModuleType:
    """Run the file as a fresh module. With ``constants``, their module-level assignments are
    replaced before it runs (``solar_assets.workloads.sizes.rebind_constants``), so constants
    computed from them (``HIDDEN = 4 * DIM``) follow. The module is in ``sys.modules`` while it
    runs: Flax modules are dataclasses, and ``dataclasses`` looks their module up there.

    As ``python file.py`` would, the file's folder is first on ``sys.path`` while it runs, so it
    can import a helper beside it; the local modules it imported are unloaded afterwards (the
    module keeps its references), so the next load imports them afresh and an edited helper is
    never served stale from ``sys.modules``."""
    from solar_assets.workloads.imports import installed_roots, is_local_module

    name = f"solar_workload_{re.sub(r'[^0-9A-Za-z_]', '_', src.name)}_{src.short_hash}"
    spec = importlib.util.spec_from_file_location(name, src.path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"{src.path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(Path(src.path).resolve().parent)
    loaded = set(sys.modules)
    sys.modules[name] = module
    sys.path.insert(0, folder)
    try:
        if constants:
            check_rebindable(src.path, constants, what="the validation size")
            tree = rebind_constants(ast.parse(Path(src.path).read_text(encoding="utf-8"), src.path), constants)
            exec(compile(tree, src.path, "exec"), module.__dict__)  # noqa: S102 - the workload file itself
        else:
            spec.loader.exec_module(module)
    except SolarError:
        raise
    except Exception as e:
        raise WorkloadError(f"{src.path}: executing the file failed: {type(e).__name__}: {e}") from e
    finally:
        sys.modules.pop(name, None)
        if folder in sys.path:
            sys.path.remove(folder)
        roots = installed_roots()
        for new in [n for n in sys.modules if n not in loaded and is_local_module(sys.modules[n], roots)]:
            del sys.modules[new]
    return module
