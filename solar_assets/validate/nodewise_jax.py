"""Node-wise validation of JAX workloads: the top-level jaxpr run once, equation by equation.

As for PyTorch (``solar_assets.validate.nodewise``), but the framework's values are those of
the workload's top-level jaxpr: each equation is bound on concrete arrays in order (a ``pjit``,
``scan`` or ``cond`` equation as a whole), values freed after their last use. An op group is
the IR steps of one top-level equation, its nested equations (``eqn3.1``, ``eqn3.c1.0``)
included: their intermediate values are the IR's own, evaluated at the points the group's
checked outputs need.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ir_schemas import Program
from solar_assets.validate.compare import ValidationResult
from solar_assets.validate.nodewise_check import (
    POINTS,
    LiveValues,
    MakeChecker,
    _Checker,
    _plan,
    require_tracer_frame,
)

if TYPE_CHECKING:
    import jax
    from jax.extend.core import ClosedJaxpr, Literal, Var

    from solar_assets.translate import Translation
    from solar_assets.workloads import WorkloadSource


def top_level(node: str) -> str:
    """``eqn3`` for ``eqn3.1`` or ``eqn3.c1.0``: the top-level equation a nested origin is in."""
    return node.split(".", 1)[0]


def relower_jax(src: WorkloadSource) -> tuple[ClosedJaxpr, list[jax.Array], Program, dict[str, str]]:
    """The workload's jaxpr on real arrays, its flat arguments, the tracer's program of it and
    the value map (IR tensor -> ``const<i>`` / ``in<i>`` / ``eqn<i>#<k>`` / ``out#<n>``)."""
    from solar_assets.translate.jax_lowering import walk
    from solar_assets.translate.jax_tracer import _lower, flat_function, literal_overrides, make_workload_jaxpr
    from solar_assets.workloads.jax_loader import load_jax_workload

    w = load_jax_workload(src)
    closed, names = make_workload_jaxpr(w)
    f, _ = flat_function(w)
    args = [[w.params[n] for n in names], *w.inputs]
    overrides = literal_overrides(f, args, closed, src.name)
    walk.TOP_VALUES = {}
    try:
        program = _lower(closed, names, len(w.inputs), src.name, src.path, overrides)
        top = walk.TOP_VALUES
    finally:
        walk.TOP_VALUES = None
    decls = program.tensor_map()
    values: dict[str, str] = {}
    for key, val in top.items():
        base = getattr(val, "base", None)
        if base in decls and val.is_whole(decls[base].shape):
            values.setdefault(base, key)
    for n, name in enumerate(program.outputs):
        values.setdefault(name, f"out#{n}")
    flat_args = [*(w.params[n] for n in names), *w.inputs]
    return closed, flat_args, program, values


def _order(closed: ClosedJaxpr) -> dict[str, int]:
    jaxpr = closed.jaxpr
    order = {f"const{n}": 0 for n in range(len(jaxpr.constvars))}
    order.update({f"in{n}": 0 for n in range(len(jaxpr.invars))})
    for i, eqn in enumerate(jaxpr.eqns):
        order[f"eqn{i}"] = i + 1
        order.update({f"eqn{i}#{k}": i + 1 for k in range(len(eqn.outvars))})
    end = len(jaxpr.eqns) + 1
    order["output"] = end
    order.update({f"out#{n}": end for n in range(len(jaxpr.outvars))})
    return order


def run_jax_capture(closed: ClosedJaxpr, args: list[jax.Array], on_node: Callable[[str, LiveValues], None],
                    extra: dict[str, int]) -> float:
    """Bind the top-level equations in order on ``args``; ``on_node(name, live)`` after each
    (``eqn<i>``, then ``output``), values kept until their last use (an equation reading them,
    the outputs, or a position in ``extra``)."""
    start = time.perf_counter()
    jaxpr = closed.jaxpr
    env: dict[Var, jax.Array] = {}
    key_of: dict[Var, str] = {}
    live: LiveValues = {}
    last: dict[str, int] = {}
    end = len(jaxpr.eqns) + 1

    def bind(v: Var, key: str, value: jax.Array) -> None:
        env[v], key_of[v], live[key] = value, key, value

    def read(v: Var | Literal) -> jax.Array:
        return v.val if type(v).__name__ == "Literal" else env[v]

    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.invars:
            if type(v).__name__ != "Literal":
                last[v] = i + 1  # type: ignore[index]
    for v in jaxpr.outvars:
        if type(v).__name__ != "Literal":
            last[v] = end  # type: ignore[index]
    for n, (v, c) in enumerate(zip(jaxpr.constvars, closed.consts)):
        bind(v, f"const{n}", c)
    for n, (v, a) in enumerate(zip(jaxpr.invars, args)):
        bind(v, f"in{n}", a)

    def free(position: int) -> None:
        for v in [v for v in env if max(last.get(v, 0), extra.get(key_of[v], 0)) <= position]:
            live.pop(key_of[v], None)
            del env[v]

    free(0)
    for i, eqn in enumerate(jaxpr.eqns):
        with eqn.ctx.manager:  # as jax.core.eval_jaxpr binds an equation
            ans = eqn.primitive.bind(*map(read, eqn.invars), **eqn.primitive.get_bind_params(eqn.params))
        outs = ans if eqn.primitive.multiple_results else [ans]
        for k, (v, x) in enumerate(zip(eqn.outvars, outs)):
            if type(v).__name__ != "DropVar":
                bind(v, f"eqn{i}#{k}", x)
        on_node(f"eqn{i}", live)
        free(i + 1)
    for n, v in enumerate(jaxpr.outvars):
        live[f"out#{n}"] = read(v)
    on_node("output", live)
    return time.perf_counter() - start


def validate_nodewise_jax(src: WorkloadSource, translation: Translation, *, points: int = POINTS,
                          make_checker: MakeChecker | None = None) -> ValidationResult:
    """``nodewise.validate_nodewise`` for a JAX workload (module docstring)."""
    start = time.perf_counter()
    closed, args, lowered, value_of = relower_jax(src)
    program = translation.program
    require_tracer_frame(src, translation, lowered, "its jaxpr")
    order = _order(closed)
    plan = _plan(program, value_of, order, key=top_level)
    checker = (make_checker or _Checker)(program, value_of, plan, order, str(src.path), points, False)
    seconds = run_jax_capture(closed, args, checker.on_node, plan.extra)
    note = (f"node-wise (JAX): {len(plan.groups)} op groups on one full-size run of the top-level jaxpr "
            f"({seconds:.2f} s); {checker.exact} tensors checked at every point, {checker.sampled} at up to "
            f"{points} sampled points, {checker.evaluations:.3g} point evaluations")
    return checker.result(note, start)
