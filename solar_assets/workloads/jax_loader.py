"""Load a JAX / Flax workload file as one pure function over (parameters, inputs).

The convention (README, "JAX workloads"): the file defines ``get_inputs()`` (a list of arrays
drawn from a fixed PRNG key) and either a pure function ``forward(*inputs)`` or a Flax module
``class Model`` (linen or nnx) with ``get_init_inputs()`` for its constructor arguments. A
Flax model's parameters are initialised by the loader with a fixed key (``SEED``), so the same
file always gives the same weights; they are the program's weights, bound as
``param:<path>`` (linen ``params`` collection / nnx ``Param``) or ``buffer:<path>`` (other
collections, e.g. batch statistics), the path's keys joined by dots.

Whatever the form, ``JaxWorkload.fn(params, *inputs)`` is the computation with the parameters
passed explicitly, so tracing, golden runs and XLA's cost analysis all see the same function.
``load_jax_workload(..., abstract=True)`` builds only shapes (``jax.eval_shape``): tracing at
full size never materialises a tensor.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from solar_assets.workloads.jax_dispatch import run_once
from solar_assets.workloads.loader import SEED, WorkloadError
from solar_assets.workloads.module import exec_workload_module
from solar_assets.workloads.source import WorkloadSource


@dataclass
class JaxWorkload:
    """A JAX workload ready to trace or run: ``fn(params, *inputs)`` and its arguments."""

    source: WorkloadSource
    module: types.ModuleType
    fn: Callable[..., Any]  # fn(params: dict[str, array], *inputs) -> array | tuple of arrays
    inputs: list[Any]  # arrays, or jax.ShapeDtypeStruct when loaded abstract
    params: dict[str, Any] = field(default_factory=dict)  # keyed by binding ('param:Dense_0.kernel')
    kind: str = "function"  # "function", "linen" or "nnx"
    checked_only: tuple[int, ...] = ()  # returned values validated but not results (a training step's gradients)




def _path_key(path: tuple[Any, ...]) -> str:
    parts = []
    for entry in path:
        for attr in ("key", "name", "idx"):
            if hasattr(entry, attr):
                parts.append(str(getattr(entry, attr)))
                break
        else:
            parts.append(str(entry))
    return ".".join(parts)


def _flatten(tree: Any) -> tuple[list[tuple[str, Any]], Any]:
    import jax

    leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
    return [(_path_key(p), v) for p, v in leaves], treedef


def _model_kind(module: types.ModuleType) -> str:
    model = getattr(module, "Model", None)
    if model is None:
        return "function"
    try:
        from flax import linen, nnx
    except ImportError as e:  # pragma: no cover - flax is a dependency
        raise WorkloadError(f"{module.__file__}: class Model needs flax: {e}") from None
    if inspect.isclass(model) and issubclass(model, linen.Module):
        return "linen"
    if inspect.isclass(model) and issubclass(model, nnx.Module):
        return "nnx"
    raise WorkloadError(f"{module.__file__}: Model is not a Flax module (flax.linen.Module or flax.nnx.Module); "
                        "a JAX workload defines forward(*inputs) or a Flax class Model")


def _inputs(module: types.ModuleType, path: str, abstract: bool) -> list[Any]:
    import jax

    if not hasattr(module, "get_inputs"):
        raise WorkloadError(f"{path}: missing get_inputs(); a JAX workload defines get_inputs() and forward(*inputs) "
                            "or a Flax class Model with get_init_inputs()")
    try:
        if abstract:
            try:
                return list(jax.eval_shape(lambda: list(module.get_inputs())))
            except Exception:  # numpy-made inputs: build them for real
                pass
        return list(run_once(lambda: list(module.get_inputs()), computed_only=True))  # the draws compiled once
    except Exception as e:
        raise WorkloadError(f"{path}: get_inputs() failed: {type(e).__name__}: {e}") from e


def _linen(module: types.ModuleType, path: str, inputs: list[Any], abstract: bool):
    import jax

    model = module.Model(*module.get_init_inputs())
    def init(*xs):
        return model.init(jax.random.key(SEED), *xs)

    variables = jax.eval_shape(init, *inputs) if abstract else run_once(init, *inputs)
    flat, treedef = _flatten(variables)
    names = [(("param:" + k[len("params."):]) if k.startswith("params.") else "buffer:" + k) for k, _ in flat]

    def fn(params: dict[str, Any], *args: Any) -> Any:
        tree = jax.tree_util.tree_unflatten(treedef, [params[n] for n in names])
        return model.apply(tree, *args)

    return fn, dict(zip(names, (v for _, v in flat)))


def _nnx(module: types.ModuleType, path: str, abstract: bool):
    import jax
    from flax import nnx

    def build():
        return module.Model(*module.get_init_inputs(), rngs=nnx.Rngs(SEED))

    model = nnx.eval_shape(build) if abstract else _built(build)
    graphdef, params_state, rest = nnx.split(model, nnx.Param, ...)
    pflat, ptree = _flatten(nnx.to_pure_dict(params_state))
    rflat, rtree = _flatten(nnx.to_pure_dict(rest))
    pnames = ["param:" + k for k, _ in pflat]
    rnames = ["buffer:" + k for k, _ in rflat]

    def fn(params: dict[str, Any], *args: Any) -> Any:
        p = nnx.State(jax.tree_util.tree_unflatten(ptree, [params[n] for n in pnames]))
        r = nnx.State(jax.tree_util.tree_unflatten(rtree, [params[n] for n in rnames]))
        model = nnx.merge(graphdef, p, r)
        with named_submodules(model):
            return model(*args)

    values = {**dict(zip(pnames, (v for _, v in pflat))), **dict(zip(rnames, (v for _, v in rflat)))}
    return fn, values


def _built(build: Callable[[], Any]) -> Any:
    """``build()``'s model, its variables made by ``run_once`` (compiled whole where cheaper)."""
    from flax import nnx

    graphdef, _ = nnx.split(nnx.eval_shape(build))
    return nnx.merge(graphdef, run_once(lambda: nnx.split(build())[1]))


@contextlib.contextmanager
def named_submodules(model: Any) -> Iterator[None]:
    """While it runs, each call of an nnx submodule in a ``jax.named_scope`` of its attribute name
    (the root's: its class name), so the equations carry the module path in their name stack
    (``Model/fc1``) as linen's do: nnx pushes none. The classes' ``__call__`` are wrapped for
    the call and put back after; a module already in its scope (``super().__call__``) is not
    scoped again."""
    import jax

    names = {id(m): (str(path[-1]) if path else type(model).__name__) for path, m in _nnx_modules(model)}
    active: set[int] = set()
    originals: dict[type, Any] = {}
    for _, m in _nnx_modules(model):
        for cls in type(m).__mro__:
            if "__call__" in vars(cls) and cls not in originals and cls.__module__ != "builtins":
                originals[cls] = vars(cls)["__call__"]

    def wrap(original: Any) -> Any:
        @functools.wraps(original)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            key = id(self)
            if key not in names or key in active:
                return original(self, *args, **kwargs)
            active.add(key)
            try:
                with jax.named_scope(names[key]):
                    return original(self, *args, **kwargs)
            finally:
                active.discard(key)
        return call

    for cls, original in originals.items():
        cls.__call__ = wrap(original)
    try:
        yield
    finally:
        for cls, original in originals.items():
            cls.__call__ = original


def _nnx_modules(model: Any) -> list[tuple[tuple, Any]]:
    from flax import nnx

    iterate = getattr(nnx, "iter_modules", None)
    return list(iterate(model) if iterate is not None else model.iter_modules())


def load_jax_workload(src: WorkloadSource, constants: dict[str, int] | None = None,
                      abstract: bool = False) -> JaxWorkload:
    """Execute the file (``constants`` rebinds its module-level sizes) and build its function,
    inputs and parameters; ``abstract``: shapes and dtypes only (``jax.ShapeDtypeStruct``). For a
    training step's source (``src.train``), the step's (``workloads.jax_training``)."""
    from solar_assets.workloads.reads import recorded_reads

    with recorded_reads(src):
        w = _load_jax(src, constants, abstract)
    if src.train is not None:
        from solar_assets.workloads.jax_training import training_workload

        return training_workload(w, src.train, abstract)
    return w


def _load_jax(src: WorkloadSource, constants: dict[str, int] | None, abstract: bool) -> JaxWorkload:
    module = exec_workload_module(src, constants)
    kind = _model_kind(module)
    inputs = _inputs(module, src.path, abstract)
    if kind == "function":
        forward = getattr(module, "forward", None)
        if not callable(forward):
            raise WorkloadError(f"{src.path}: missing forward(*inputs); a JAX workload defines get_inputs() and "
                                "forward(*inputs), or a Flax class Model with get_init_inputs()")
        return JaxWorkload(src, module, lambda params, *args: forward(*args), inputs, {}, kind)
    if not hasattr(module, "get_init_inputs"):
        raise WorkloadError(f"{src.path}: missing get_init_inputs() (the arguments of Model(...))")
    try:
        if kind == "linen":
            fn, params = _linen(module, src.path, inputs, abstract)
        else:
            fn, params = _nnx(module, src.path, abstract)
    except WorkloadError:
        raise
    except Exception as e:
        raise WorkloadError(f"{src.path}: building the Flax model or its parameters failed: "
                            f"{type(e).__name__}: {e}") from e
    return JaxWorkload(src, module, fn, inputs, params, kind)
