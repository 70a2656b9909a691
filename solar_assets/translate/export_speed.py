"""torch.export's fixed cost per call that no workload asks for, paid once per process instead.

Every ``run_decompositions`` (and ``default_decompositions``) collects the composite-implicit ops
of every operator namespace, and for each of the ~27 namespaces first "materialises" every
composite-implicit op the C++ dispatcher knows (``torch._export.utils._materialize_cpp_cia_ops``:
a ``getattr`` chain per op, which creates the ``torch.ops`` entries the walk then reads). torch
cannot cache it, because a custom op registered later adds entries to the dispatcher. But the
materialisation only creates entries that do not exist yet: when the dispatcher's list of
composite-implicit registrations is the one already materialised, it does nothing. So it is run
again exactly when that list changed (``materialise_when_registrations_change``): ~0.1 s of each
export (KernelBench: ~900 exports per run) becomes a list comparison. The ops torch collects are
the same (``tests/test_export_speed.py`` compares them with the uncached collection, before and
after a custom op is registered).
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

_installed = False


def materialise_when_registrations_change() -> None:
    """Replace torch's materialisation by one that runs only when the dispatcher's
    composite-implicit registrations changed since it last ran (idempotent; a torch without that
    function is left as it is)."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        import torch
        import torch._export.utils as export_utils

        original = export_utils._materialize_cpp_cia_ops
        registrations = torch._C._dispatch_get_registrations_for_dispatch_key
    except (ImportError, AttributeError):
        log.debug("torch.export's materialisation not found: left as it is", exc_info=True)
        return
    export_utils._materialize_cpp_cia_ops = _when_changed(original, lambda: registrations("CompositeImplicitAutograd"))


def _when_changed(materialise: Callable[[], None], current: Callable[[], list[str]]) -> Callable[[], None]:
    done: list[tuple[str, ...]] = []  # the registrations last materialised

    @functools.wraps(materialise)
    def materialise_if_new() -> None:
        now = tuple(current())
        if done and done[0] == now:
            return
        materialise()
        done[:] = [now]

    materialise_if_new.__wrapped_by_solar__ = True  # type: ignore[attr-defined]
    return materialise_if_new
