"""The deterministic JAX translator: ``jax.make_jaxpr`` of the workload, lowered equation by equation.

The workload is traced on shapes alone (``jax.ShapeDtypeStruct`` inputs and parameters from
``jax.eval_shape``), so no full-size tensor is ever made. Every equation must find a lowering;
a miss names the primitive, the file and the source line JAX recorded for it (an equation
that is not lowered is never counted as zero).

Graph inputs: the parameters (weights, ``param:<path>`` / ``buffer:<path>``), the
``get_inputs()`` arrays (``input:<i>``), and array constants the function closes over
(weights bound as ``const:<i>``, whose values the golden maker takes from the same jaxpr).
"""
from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from solar_assets.errors import SolarError
from solar_assets.stage_clock import timed
from solar_assets.translate.jax_lowering import PrimitiveError, run_jaxpr, walk
from solar_assets.translate.jax_lowering.context import LoweringGap, ir_dtype
from solar_assets.translate.core.complex import ComplexPair
from solar_assets.translate.out_of_scope import reason_suffix
from solar_assets.translate.core.builder import OUTPUT_ORIGIN, ProgramBuilder
from solar_assets.translate.translation import Translation, TranslationError
from solar_assets.workloads import WorkloadSource
from solar_assets.workloads.jax_loader import JaxWorkload, load_jax_workload

log = logging.getLogger(__name__)


def flat_function(w: JaxWorkload):
    """``(f, names)``: ``f(param_list, *inputs)`` returns a flat list of output arrays; ``names`` the
    parameter bindings in ``param_list`` order."""
    names = sorted(w.params)

    def f(plist, *inputs):
        out = w.fn(dict(zip(names, plist)), *inputs)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    return f, names


def make_workload_jaxpr(w: JaxWorkload) -> tuple[Any, list[str]]:
    """The ClosedJaxpr of the workload (params first, then inputs) and the parameter bindings."""
    import jax

    f, names = flat_function(w)
    try:
        with timed("export"):
            closed = jax.make_jaxpr(f)([w.params[n] for n in names], *w.inputs)
    except SolarError:
        raise
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise TranslationError(f"{w.source.path}: jax.make_jaxpr failed (the function does not trace): "
                               f"{type(e).__name__}: {first}") from e
    return closed, names


def _subjaxprs(params: dict[str, Any]) -> list[Any]:
    found = []
    for value in params.values():
        for item in (value if isinstance(value, (tuple, list)) else [value]):
            if hasattr(item, "eqns") or hasattr(item, "jaxpr"):
                found.append(item.jaxpr if hasattr(item, "jaxpr") and not hasattr(item, "eqns") else item)
    return found


def _pair_literals(j32: Any, j64: Any, out: dict[int, Any]) -> bool:
    """Map each float literal of ``j32`` to its float64 twin in ``j64``; False if they differ in shape."""
    if len(j32.eqns) != len(j64.eqns):
        return False
    for e32, e64 in zip(j32.eqns, j64.eqns):
        if e32.primitive.name != e64.primitive.name or len(e32.invars) != len(e64.invars):
            return False
        for a, b in zip(e32.invars, e64.invars):
            if type(a).__name__ == "Literal" and type(b).__name__ == "Literal":
                va, vb = np.asarray(a.val), np.asarray(b.val)
                if va.shape == () and va.dtype.kind == "f" and vb.dtype.kind == "f":
                    if abs(float(vb) - float(va)) <= 1e-6 * max(1.0, abs(float(va))):
                        out[id(a)] = float(vb)  # the same constant, unrounded (else: a dtype's own
                        # extreme such as finfo.min, which must stay the float32 one)
        s32, s64 = _subjaxprs(e32.params), _subjaxprs(e64.params)
        if len(s32) != len(s64) or not all(_pair_literals(a, b, out) for a, b in zip(s32, s64)):
            return False
    return True


def literal_overrides(f: Any, args: list[Any], closed: Any, name: str = "") -> dict[int, Any]:
    """The float64 values of the float32 jaxpr's float literals: ``f`` traced again with x64
    enabled (scoped) and float64 arguments; {} when the two jaxprs do not line up equation by equation."""
    import jax
    import jax.numpy as jnp

    def as64(x):
        dt = jnp.float64 if jnp.issubdtype(x.dtype, jnp.floating) else x.dtype
        return jax.ShapeDtypeStruct(x.shape, dt)

    try:
        with jax.enable_x64(True):
            with timed("export"):
                closed64 = jax.make_jaxpr(f)(*jax.tree_util.tree_map(as64, list(args)))
    except Exception:  # noqa: BLE001 - the float32 literals are still a valid (slightly rounded) program
        log.debug("%s: no float64 trace", name, exc_info=True)
        return {}
    out: dict[int, Any] = {}
    return out if _pair_literals(closed.jaxpr, closed64.jaxpr, out) else {}


def array_consts(closed: Any) -> list[tuple[int, np.ndarray]]:
    """The closed-over constants that are arrays (rank ≥ 1), with their position among consts."""
    return [(i, np.asarray(c)) for i, c in enumerate(closed.consts) if np.ndim(c) > 0]


def lower_closed_jaxpr(closed: Any, names: list[str], n_inputs: int, program_name: str, path: str):
    """Build the Program: declare the graph inputs, walk the equations, mark the outputs."""
    b = ProgramBuilder(program_name)
    jaxpr = closed.jaxpr
    try:
        consts = []
        for i, c in enumerate(closed.consts):
            a = np.asarray(c)
            if a.ndim == 0:
                consts.append(bool(a.item()) if a.dtype == np.bool_ else a.item())
            else:
                consts.append(b.declare(f"const{i}", a.shape, ir_dtype(a.dtype), "weight", f"const:{i}"))
        args = []
        for n, v in enumerate(jaxpr.invars):
            shape, dtype = tuple(int(s) for s in v.aval.shape), ir_dtype(v.aval.dtype)
            if n < len(names):
                hint = names[n].split(":", 1)[1].replace(".", "_")
                args.append(b.declare(hint, shape, dtype, "weight", names[n]))
            else:
                args.append(b.declare(f"x{n - len(names)}", shape, dtype, "input", f"input:{n - len(names)}"))
        if len(jaxpr.invars) != len(names) + n_inputs:
            raise TranslationError(f"{path}: get_inputs() must return arrays (a flat list); the traced function "
                                   f"takes {len(jaxpr.invars) - len(names)} input arrays, not {n_inputs}")
        outs = run_jaxpr(b, jaxpr, consts, args)
    except PrimitiveError as e:
        raise TranslationError(f"{path}: {e}") from None
    except LoweringGap as e:
        raise TranslationError(f"{path}: {e}") from None
    start = len(b.steps)
    for n, x in enumerate(outs):
        for plane in ((x.re, x.im) if isinstance(x, ComplexPair) else (x,)):  # a complex output: two planes
            if not hasattr(plane, "base"):  # a constant output: a filled tensor
                raise TranslationError(f"{path}: output {n} is a constant ({plane!r}), not computed from the inputs")
            b.set_output(plane, f"out_{len(b.outputs)}")
    b.tag_origin(start, OUTPUT_ORIGIN)
    return b.build()


def _key_arrays(closed: Any) -> list[str]:
    """The primitives of the jaxpr that make or take PRNG key arrays (``jax.random`` with a key),
    less those a fixed-pattern draw lowers (``jax_lowering.random``)."""
    import jax

    from solar_assets.translate.jax_lowering.random import DRAW_PRIMITIVES, KEY_MOVES, KEY_PRIMITIVES

    found = []
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive.name in (*KEY_PRIMITIVES, *DRAW_PRIMITIVES, *KEY_MOVES, "jit", "pjit"):
            continue  # the keys and draws the lowerings fix (jax_lowering.random); a call is looked into there
        for v in (*eqn.invars, *eqn.outvars):
            dtype = getattr(getattr(v, "aval", None), "dtype", None)
            if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
                found.append(eqn.primitive.name)
                break
    return list(dict.fromkeys(found))


def _lower(closed: Any, names: list[str], n_inputs: int, name: str, path: str, overrides: dict[int, Any]):
    keyed = _key_arrays(closed)
    if keyed:
        raise TranslationError(f"{path}: no lowering for JAX primitive {keyed[0]} (PRNG key arrays: "
                               f"{', '.join(keyed)}){reason_suffix('random_bits')}")
    walk.LITERAL_OVERRIDES = overrides
    try:
        return lower_closed_jaxpr(closed, names, n_inputs, name, path)
    except SolarError:
        raise
    except Exception as e:
        raise TranslationError(f"{path}: lowering the jaxpr failed: {type(e).__name__}: {e}") from e
    finally:
        walk.LITERAL_OVERRIDES = {}


def trace_function(fn: Any, inputs: list[Any], name: str = "fn") -> Any:
    """The checked IR of a plain function of arrays (``input:<i>`` bindings), for tests and notebooks;
    closed-over array constants are bound ``const:<i>`` as in ``trace_jax``."""
    import jax

    from solar_assets.ir import check_program

    def f(*xs):
        out = fn(*xs)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    try:
        with timed("export"):
            closed = jax.make_jaxpr(f)(*inputs)
    except Exception as e:
        raise TranslationError(f"{name}: jax.make_jaxpr failed: {type(e).__name__}: {e}") from e
    program = _lower(closed, [], len(inputs), name, name, literal_overrides(f, list(inputs), closed, name))
    check_program(program, name)
    return program


def trace_jax(src: WorkloadSource, constants: dict[str, int] | None = None) -> Translation:
    """Translate a JAX / Flax workload file into a checked Affine Loop IR program."""
    from solar_assets.ir import check_program

    start = time.perf_counter()
    w = load_jax_workload(src, constants, abstract=True)
    closed, names = make_workload_jaxpr(w)
    f, _ = flat_function(w)
    overrides = literal_overrides(f, [[w.params[n] for n in names], *w.inputs], closed, src.name)
    program = _lower(closed, names, len(w.inputs), src.name, src.path, overrides)
    if w.checked_only:  # a training step's gradients: validated, not charged (Program.checked_only)
        program = program.model_copy(update={"checked_only": tuple(program.outputs[i] for i in w.checked_only)})
    check_program(program, src.path)
    seconds = time.perf_counter() - start
    log.info("traced %s (jax): %d steps in %.2fs", src.name, len(program.steps), seconds)
    return Translation(program=program, translator="tracer", source_sha256=src.sha256, seconds=seconds)
