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

Every ``run_decompositions`` also overrides the Python kernels of each preservable composite op
(~500 with solar's table) for its re-trace and puts them back after
(``exported_program._override_composite_implicit_decomp``): about 11,000 ``OpOverload.py_impl``
registrations, each of which evaluates its own nested function's ``Callable[_P, _T]``
annotations, clears the op's dispatch cache and checks the key's type — ~0.07 s of a small
model's ~0.23 s ``run_decompositions`` on the 2-core machine. ``fast_cia_override``
makes the same entries in each op's ``py_kernels`` table directly, clears each op's cache once,
and registers the same fake-tensor rules, the same way round (``tests/test_export_speed.py``
compares the tables torch's override and this one leave inside and after the context, and the
exported graphs).
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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


_fast_installed = False


def fast_cia_override() -> None:
    """Replace torch's ``_override_composite_implicit_decomp`` by ``_override_cia`` (idempotent; a
    torch without the pieces it uses is left as it is)."""
    global _fast_installed
    if _fast_installed:
        return
    _fast_installed = True
    try:
        import torch.export.exported_program as ep_module
        from torch._export.utils import _get_decomp_for_cia  # noqa: F401 - the pieces _override_cia uses
        from torch._higher_order_ops.utils import autograd_not_implemented  # noqa: F401
        from torch._subclasses.fake_impls import (  # noqa: F401
            _deregister_op_impl, _is_op_registered_to_fake_rule, register_op_impl)

        original = ep_module._override_composite_implicit_decomp
        ep_module._AUTOGRAD_ALIAS_BACKEND_KEYS_TO_OVERRIDE, ep_module._BACKEND_KEYS_TO_OVERRIDE  # noqa: B018
    except (ImportError, AttributeError):
        log.debug("torch.export's composite-implicit override not found: left as it is", exc_info=True)
        return

    @functools.wraps(original)  # (``__wrapped__``: torch's, for the tests)
    def override(cia_ops_to_callable: dict[Any, Callable[..., Any]]) -> Any:
        return _override_cia(cia_ops_to_callable)

    override.__wrapped_by_solar__ = True  # type: ignore[attr-defined]
    ep_module._override_composite_implicit_decomp = override


@contextmanager
def _override_cia(cia_ops_to_callable: dict[Any, Callable[..., Any]]) -> Iterator[None]:
    """torch's ``_override_composite_implicit_decomp`` (torch 2.13), with each op's ``py_kernels``
    entries made directly instead of through ``py_impl``: the same entries, in the same order, the
    dispatch cache cleared once per op (``py_impl`` cleared it per entry)."""
    import torch
    import torch.export.exported_program as ep_module
    from torch._export.utils import _get_decomp_for_cia
    from torch._higher_order_ops.utils import autograd_not_implemented
    from torch._subclasses.fake_impls import _deregister_op_impl, _is_op_registered_to_fake_rule, register_op_impl

    cia = torch._C.DispatchKey.CompositeImplicitAutograd
    autograd_keys = ep_module._AUTOGRAD_ALIAS_BACKEND_KEYS_TO_OVERRIDE
    backend_keys = ep_module._BACKEND_KEYS_TO_OVERRIDE
    saved: dict[Any, dict[Any, Any]] = {}
    try:
        for op, decomp in cia_ops_to_callable.items():
            kernels = op.py_kernels
            saved[op] = kernels.copy()
            for key in autograd_keys:
                if key not in kernels:
                    kernels[key] = autograd_not_implemented(op, deferred_error=True)
            original = _get_decomp_for_cia(op)  # before the CIA entry is replaced (torch's NOTE)
            kernels.pop(cia, None)
            kernels[cia] = decomp
            if not _is_op_registered_to_fake_rule(op):
                rule = functools.partial(_force_dispatch_to_orig_cia_callable, original_callable=original)
                register_op_impl(op)(rule)
            for key in backend_keys:
                if key not in kernels:
                    kernels[key] = original
            op._dispatch_cache.clear()
        yield
    finally:
        for op, kernels in saved.items():
            op.py_kernels.clear()
            op.py_kernels.update(kernels)
            op._dispatch_cache.clear()
            _deregister_op_impl(op)


def _force_dispatch_to_orig_cia_callable(fake_tensor_mode: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
    """torch's fake-tensor rule for an overridden op (a local function of its override): the op's
    original composite-implicit kernel, under the fake mode."""
    original = kwargs.pop("original_callable")
    with fake_tensor_mode:
        return original(*args, **kwargs)
