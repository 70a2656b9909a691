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
import itertools
import logging
import threading
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


_current = threading.local()  # the outermost decomposition running: (call id, op)
_call_ids = itertools.count()


def export_decomposed(model: Any, args: tuple[Any, ...], table: dict[Any, Any]) -> Any:
    """``torch.export.export(model, args).run_decompositions(table)`` in one trace.

    ``torch.export.export`` traces the model into the pre-dispatch (training) IR, and
    ``run_decompositions`` then traces that graph again through AOT dispatch with the table: the
    second trace is ~70 % of an export (ResNet-101: 2.35 of 3.25 s). torch's own ``_export`` with
    ``pre_dispatch=False`` traces the model through AOT dispatch directly, the path
    ``run_decompositions`` takes for its re-trace, given the same table split the same way (the
    composite-implicit entries through the override context, the rest to AOT dispatch).

    What the second trace added is each node's provenance: the op the user's code called
    (``linear`` for the ``permute`` and ``addmm`` it became, ``relu_`` for a functionalised
    ``relu``), which the per-op report and the measured-op join name calls by. Here the nodes traced
    while an op the user's code called is being decomposed or functionalised are marked with it
    (``torch_origin.CALL_META``; the outermost op: a decomposition that calls another op is still one call):
    every composite-implicit op's decomposition (the table's, or the dispatcher's own) and
    functionalisation's dispatch are wrapped for the trace. The calls are then named in program
    order as the pre-dispatch graph names its nodes (``_name_calls``).

    On KernelBench's 270 files the lowered programs are the same, origins included, for 245. (The
    time it saves is not settled: in one process the one trace ran second on each file and took
    186 s against 271 s, but first, on seven files, 11.2 s against 9.5 s: whichever runs first on a
    model warms torch's caches for it; see docs/cold_path.md.) The other 25 differ where the one trace is
    closer to the user's code: a ``torch.tensor(...)`` made in forward is read as it is where the
    two traces copy it (``clone``: 8 files); a call is named ``arange`` where
    the pre-dispatch graph had numbered it after nodes it later dropped (``arange_2``); and a
    ``torch.no_grad`` region's ops are attributed to their own call and line (``layer_norm``,
    ``modeling_reformer.py:1384``) instead of the pre-dispatch graph's wrapper
    (``wrap_with_set_grad_enabled``, ``<eval_with_key>``). ``tests/test_export_speed.py`` compares
    the two on KernelBench-style models.

    A forward that assigns a buffer takes the two traces (``_buffer_assignments``), as does a torch
    without the pieces, or a model the one trace fails on."""
    import torch

    try:
        from torch._subclasses.functional_tensor import FunctionalTensorMode
        from torch.export import _trace
        from torch.export import exported_program as ep_module
        from torch.fx.experimental.proxy_tensor import PythonKeyTracer

        aten_ir = _trace._export_to_aten_ir
        split = ep_module._split_decomp_table_to_cia_and_python_decomp
        override = ep_module._override_composite_implicit_decomp
        preserve = ep_module._special_op_to_preserve_cia
        export = _trace._export
        create_node = PythonKeyTracer.create_node
        functionalise = FunctionalTensorMode.__torch_dispatch__
    except (ImportError, AttributeError):
        log.debug("torch.export's one-trace pieces not found: two traces", exc_info=True)
        return torch.export.export(model, args).run_decompositions(table)
    cia, python_table = split(dict(table))
    cia = {op: fn if fn is preserve else _as_call(op, fn) for op, fn in cia.items()}
    python_table = {op: _as_call(op, fn) for op, fn in python_table.items()}

    @functools.wraps(aten_ir)
    def with_table(*a: Any, **k: Any) -> Any:
        k["decomp_table"] = python_table
        return aten_ir(*a, **k)

    from solar_assets.translate.torch_origin import CALL_META

    @functools.wraps(create_node)
    def marking(self: Any, *a: Any, **k: Any) -> Any:
        node = create_node(self, *a, **k)
        current = getattr(_current, "call", None)
        if current is not None and node.op == "call_function":
            node.meta[CALL_META] = current
        return node

    @functools.wraps(functionalise)
    def functionalising(self: Any, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return _marking(func, functionalise, self, func, types, args, kwargs)

    patched = [(_trace, "_export_to_aten_ir", aten_ir, with_table),
               (PythonKeyTracer, "create_node", create_node, marking),
               (FunctionalTensorMode, "__torch_dispatch__", functionalise, functionalising)]
    assigned: list[str] = []
    try:
        for owner, name, _, replacement in patched:
            setattr(owner, name, replacement)
        with override(cia), _composite_calls(set(cia)), _buffer_assignments(assigned):
            ep = export(model, args, strict=False, pre_dispatch=False)
        if not assigned:
            _tied_read_as_one(ep, model)
            _name_calls(ep.graph)
            return ep
        log.debug("forward assigns buffer(s) %s: two traces", ", ".join(assigned[:4]))
    except Exception:  # noqa: BLE001 - torch's own path decides: its error is the one reported
        log.debug("the one-trace export failed: two traces", exc_info=True)
    finally:
        for owner, name, original, _ in patched:
            setattr(owner, name, original)
    return torch.export.export(model, args).run_decompositions(table)


def _tied_read_as_one(ep: Any, model: Any) -> None:
    """A weight tied to another (an HF model's embedding and its output projection) read through
    one placeholder, as the two traces' graph reads it: the signature lists each name of the tensor,
    and the one trace reads each use through its own name, which would make one tensor two to the
    lowering and the bounds (each counted in DRAM traffic). The two traces read every use through
    the last of the names; the others are left unread."""
    tensors = {**dict(model.named_parameters(remove_duplicate=False)),
               **dict(model.named_buffers(remove_duplicate=False))}
    names: dict[int, list[str]] = {}
    for spec in ep.graph_signature.input_specs:
        tensor = tensors.get(spec.target) if spec.target else None
        if tensor is not None:
            names.setdefault(id(tensor), []).append(spec.arg.name)
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    tied = [group for group in names.values() if len(group) > 1]
    for group in tied:
        for name in group[:-1]:
            placeholders[name].replace_all_uses_with(placeholders[group[-1]])
    if tied:
        ep.graph_module.recompile()


@contextmanager
def _buffer_assignments(assigned: list[str]) -> Iterator[None]:
    """Collect the buffers a forward assigns (``self.hidden = torch.tanh(...)``). The pre-dispatch
    trace records such an assignment as the buffer's update; the one AOT-dispatch trace does not
    (KernelBench's VanillaRNN would update ``hidden`` to its copied input instead of the new state),
    so a model that assigns one takes the two traces."""
    import torch

    def hook(module: Any, name: str, value: Any) -> None:
        if name in module._buffers:  # a new value for an existing buffer (not the tracer's own constants)
            assigned.append(name)

    handle = torch.nn.modules.module.register_module_buffer_registration_hook(hook)
    try:
        yield
    finally:
        handle.remove()


@functools.lru_cache(maxsize=None)
def _as_call(op: Any, decompose: Callable[..., Any]) -> Callable[..., Any]:
    """``decompose``, marking what it traces as one call of ``op`` (``_marking``): one wrapper per
    (op, decomposition) for the process, not ~1,500 new closures per export."""
    @functools.wraps(decompose)
    def call(*args: Any, **kwargs: Any) -> Any:
        return _marking(op, decompose, *args, **kwargs)
    return call


def _marking(op: Any, run: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``run(*args, **kwargs)``, the nodes it traces marked as one call of ``op`` unless a call is
    running already (a decomposition that calls another op is still the user's one call)."""
    if getattr(_current, "call", None) is not None:
        return run(*args, **kwargs)
    _current.call = (next(_call_ids), op)
    try:
        return run(*args, **kwargs)
    finally:
        _current.call = None


@contextmanager
def _composite_calls(handled: set[Any]) -> Iterator[None]:
    """The dispatcher's own composite-implicit kernels (the ops not in ``handled``: those the
    export's override does not replace, such as ``batch_norm``), run through ``_as_call`` while
    the export traces, and put back after."""
    import torch

    key = torch._C.DispatchKey.CompositeImplicitAutograd
    saved: dict[Any, Any] = {}
    try:
        for op in _composite_ops():
            if op in handled:
                continue
            kernels = op.py_kernels
            saved[op] = kernels.get(key)
            kernels[key] = _as_call(op, saved[op] or _dispatcher_kernel(op))
            op._dispatch_cache.clear()
        yield
    finally:
        for op, kernel in saved.items():
            if kernel is None:
                op.py_kernels.pop(key, None)
            else:
                op.py_kernels[key] = kernel
            op._dispatch_cache.clear()


@functools.lru_cache(maxsize=None)
def _dispatcher_kernel(op: Any) -> Callable[..., Any]:
    """The dispatcher's own composite-implicit kernel of ``op`` (one object per op, so that its
    ``_as_call`` wrapper is made once)."""
    import torch

    return functools.partial(op._op_dk, torch._C.DispatchKey.CompositeImplicitAutograd)


def _composite_ops() -> list[Any]:
    """The overloads with a composite-implicit kernel the dispatcher knows (resolved once for each
    list of registrations: a custom op registered later adds to it)."""
    import torch

    return _resolved(tuple(torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")))


@functools.lru_cache(maxsize=4)
def _resolved(names: tuple[str, ...]) -> list[Any]:
    import torch

    ops = []
    for name in names:
        namespace, _, rest = name.partition("::")
        packet_name, _, overload = rest.partition(".")
        try:
            ops.append(getattr(getattr(getattr(torch.ops, namespace), packet_name), overload or "default"))
        except (AttributeError, RuntimeError):
            continue
    return ops


def _name_calls(graph: Any) -> None:
    """Each call node's ``CALL_META`` as ``(name, op)``: the calls named in program order in one
    namespace with the placeholders, as the pre-dispatch graph names its nodes (``conv2d``,
    ``conv2d_1``, ...); a node no decomposition marked is its own call."""
    from torch.fx.graph import _Namespace

    from solar_assets.translate.torch_origin import CALL_META, op_name

    names = _Namespace()
    for node in graph.nodes:
        if node.op == "placeholder":
            names.create_name(node.name, None)
    named: dict[Any, str] = {}
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        mark = node.meta.get(CALL_META)
        key, op = (mark[0], mark[1]) if mark else (node, node.target)
        if key not in named:
            named[key] = names.create_name(_base_name(op), None)
        node.meta[CALL_META] = (named[key], op_name(op))


def _base_name(target: Any) -> str:
    """As FX names a node of ``target`` (``__and__`` → ``and``)."""
    packet = getattr(target, "overloadpacket", None)
    name = str(getattr(packet, "__name__", None) or getattr(target, "__name__", None) or target)
    return name[2:-2] if len(name) > 4 and name.startswith("__") and name.endswith("__") else name
