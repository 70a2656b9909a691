"""Calls and control flow: inlined sub-programs, Repeat steps for loops, Cond steps for branches.

``jit`` / ``pjit`` / ``closed_call`` / ``remat`` and the primal of ``custom_jvp_call`` /
``custom_vjp_call`` are inlined (their IR is the body's). ``scan`` becomes a ``Repeat`` step (the
IR's static repeat: the body once, its kernels indexed by the step variable, the carry in state
tensors) when its carries are tensors or integer counters stepped by one (``fori_loop`` with a
static trip count); a counter is a ``Counter`` inside the body, usable only in affine positions
(``dynamic_slice`` starts, shifts, comparisons that are static over the loop). ``while`` is a
Repeat when its integer carries step by constants and its condition folds on them (the trip
count is found by stepping the counters); otherwise both unroll (one copy of the body per step)
while the condition folds to a number, and a data-dependent trip count is not lowered. ``cond``
with an index that folds to a number is the taken branch only; with a data-dependent index it is
a ``Cond`` step whose branches each copy their results into the same output tensors.
"""
from __future__ import annotations

import logging
from typing import Any

from solar_assets.translate.jax_lowering.context import Counter, JCtx, Lin, LoweringGap, SymTensor, is_const
from solar_assets.translate.core.complex import complex_aware
from solar_assets.translate.jax_lowering.random import UNIFORM_CALL, uniform_draw
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.translate.jax_lowering.walk import (
    current_eqn_module, current_eqn_path, current_eqn_source, eqn_origin, run_closed, run_jaxpr, whole_program_call,
)
from solar_assets.translate.core.views import copy_at, step_view
from solar_assets.translate.core.builder import with_origin

log = logging.getLogger(__name__)

MAX_UNROLL = 4096  # steps of a while loop before it is taken for a data-dependent one


def _closed(jaxpr: Any):
    """(jaxpr, consts) of a ClosedJaxpr or an open Jaxpr."""
    return (jaxpr.jaxpr, list(jaxpr.consts)) if hasattr(jaxpr, "consts") else (jaxpr, [])


def _inline(c: JCtx, jaxpr: Any, args) -> list:
    inner, consts = _closed(jaxpr)
    if consts:
        return run_closed(c.b, jaxpr, list(args))
    return run_jaxpr(c.b, inner, [], list(args))


@lowers("jit", "pjit")
@complex_aware
def jit_lowering(c: JCtx, *args, **params):
    """A jitted call (``jax.nn.gelu``, ``jax.nn.softmax``, a user's ``@jax.jit`` helper) is what eager
    JAX dispatches as one XLA computation: its body is inlined, and every step it emits is tagged
    with the call's origin (op ``jit:<name>``), so the unfused bound charges it one round trip, as
    a fused PyTorch op is. A call that is the whole program (the user's model under ``jax.jit``)
    keeps its equations' own origins: the per-op table is about the ops inside it."""
    start = len(c.b.steps)
    path = current_eqn_path()
    base = eqn_origin(c.eqn, path, current_eqn_module(), current_eqn_source()) if path is not None else None
    if params.get("name") == UNIFORM_CALL and len(args) == 3:  # a jax.random draw: the fixed pattern
        outs = [uniform_draw(c, *args)]
    else:
        outs = _inline(c, params["jaxpr"], args)
    if base is not None and not whole_program_call(path):
        origin = base.model_copy(update={"op": f"jit:{params.get('name', c.eqn.primitive.name)}"})
        c.b.steps[start:] = [with_origin(st, origin, replace=True) for st in c.b.steps[start:]]
    return outs


@lowers("closed_call", "core_call")
@complex_aware
def call_lowering(c: JCtx, *args, **params):
    return _inline(c, params.get("jaxpr") or params["call_jaxpr"], args)


@lowers("remat", "remat2", "checkpoint")
@complex_aware
def remat_lowering(c: JCtx, *args, jaxpr, **_):
    return _inline(c, jaxpr, args)


@lowers("custom_jvp_call")
@complex_aware
def custom_jvp_lowering(c: JCtx, *args, call_jaxpr, **_):
    return _inline(c, call_jaxpr, args)


@lowers("custom_vjp_call", "custom_vjp_call_jaxpr")
@complex_aware
def custom_vjp_lowering(c: JCtx, *args, **params):
    body = params.get("call_jaxpr") or params.get("fun_jaxpr")
    if body is None:
        raise LoweringGap(f"custom_vjp_call without a primal jaxpr (params: {sorted(params)})")
    return _inline(c, body, args)


def _step_view(x, i: int | Lin):
    """Step ``i`` (a number, or the repeat variable) of a scanned-over array (``core.views.step_view``);
    a constant is the same at every step."""
    return x if is_const(x) else step_view(x, i if isinstance(i, Lin) else Lin.constant(i))


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _loop_repeat(c: JCtx, jaxpr, consts, carry, xs, length: int, reverse: bool, num_carry: int, ys_out,
                 deltas: dict[int, int], hint: str | None = None):
    """The loop as one Repeat step of ``length`` iterations: tensor carries live in state tensors
    written at the end of each iteration, integer carry ``k`` is a ``Counter`` stepping by
    ``deltas[k]`` (a ``fori_loop`` counter, checked to be updated as ``i + delta``), step t's
    ``xs`` are views at t, its ``ys`` are copied to row t. Returns the carries after the loop."""
    states: list = []
    for k, x in enumerate(carry):
        if k in deltas:
            states.append(None)
            continue
        if not isinstance(x, SymTensor):
            raise LoweringGap(f"carry {k} is a number the loop does not step by a constant")
        state = c.b.declare(f"{c.name}_carry{k}", c.out_shape(k), c.out_dtype(k))
        copy_at(c, state, x, f"{c.name}_carry{k}_init")
        states.append(state)
    var = c.b.fresh(f"t_{c.name}", "step")
    counters = {k: Counter(Lin.of(var, d) + Lin.constant(carry[k]), min(carry[k], carry[k] + (length - 1) * d),
                           max(carry[k], carry[k] + (length - 1) * d)) for k, d in deltas.items()}
    with c.b.repeat(hint or c.name, var, length):
        step = Lin.constant(length - 1) + Lin.of(var, -1) if reverse else Lin.of(var)
        inside = [counters[k] if k in counters else s for k, s in enumerate(states)]
        outs = _inline(c, jaxpr, consts + inside + [_step_view(x, step) for x in xs])
        for k, ctr in counters.items():
            if outs[k] != ctr.shift(deltas[k]):
                raise LoweringGap(f"the loop counter (carry {k}) is not stepped by {deltas[k]}")
        if any(isinstance(x, Counter) for k, x in enumerate(outs) if k not in counters):
            raise LoweringGap("the loop counter escapes into a tensor")
        for n, (dst, y) in enumerate(zip(ys_out, outs[num_carry:])):
            if dst is not None:
                copy_at(c, dst, y, f"{c.name}_ys{n}", [step])
        bases = {s.base for s in states if s is not None}
        new = []
        for k, x in enumerate(outs[:num_carry]):  # a carry that reads a state is copied out first
            if k not in counters and isinstance(x, SymTensor) and x.base in bases and x != states[k]:
                x = c.b.materialize(x, f"{c.name}_next{k}", force=True)
            new.append(x)
        for k, (state, x) in enumerate(zip(states, new)):
            if state is not None and x != state:
                copy_at(c, state, x, f"{c.name}_carry{k}_next")
    return [carry[k] + length * deltas[k] if k in deltas else s for k, s in enumerate(states)]


def _try_repeat(c: JCtx, *args, **kwargs):
    """``_loop_repeat``, or None (its steps withdrawn) when the body does not lower as one."""
    n0 = len(c.b.steps)
    try:
        return _loop_repeat(c, *args, **kwargs)
    except LoweringGap as e:
        del c.b.steps[n0:]
        log.debug("%s: loop unrolled (%s)", c.name, e)
        return None


@lowers("scan")
def scan_lowering(c: JCtx, *args, jaxpr, num_consts: int, num_carry: int, length: int, reverse: bool = False,
                  **_):
    """A Repeat step when every carry is a tensor or an integer counter the body steps by one (a
    ``fori_loop`` with a static trip count, whose counter is used only as an affine slice start);
    otherwise unrolled, one copy of the body per step."""
    consts, carry, xs = list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]), \
        list(args[num_consts + num_carry:])
    ys_out = [None if type(c.eqn.outvars[num_carry + n]).__name__ == "DropVar"
              else c.new_output(num_carry + n, f"{c.name}_ys{n}") for n in range(len(c.eqn.outvars) - num_carry)]
    if length > 1 and carry and all(isinstance(x, SymTensor) or _is_int(x) for x in carry) \
            and any(isinstance(x, SymTensor) for x in carry):
        deltas = {k: 1 for k, x in enumerate(carry) if _is_int(x)}
        done = _try_repeat(c, jaxpr, consts, carry, xs, length, reverse, num_carry, ys_out, deltas)
        if done is not None:
            return done + ys_out
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        outs = _inline(c, jaxpr, consts + carry + [_step_view(x, i) for x in xs])
        carry = outs[:num_carry]
        for n, (dst, y) in enumerate(zip(ys_out, outs[num_carry:])):
            if dst is not None:  # an unused output
                copy_at(c, dst, y, f"{c.name}_ys{n}_step{i}", [Lin.constant(i)])
    return carry + ys_out


def _while_repeat(c: JCtx, cond_jaxpr, body_jaxpr, cconsts, bconsts, carry):
    """A while loop with integer counters stepped by constants and a condition on them alone, as
    one Repeat step; None when it is not one."""
    ints = [k for k, x in enumerate(carry) if _is_int(x)]
    if not ints or not any(isinstance(x, SymTensor) for x in carry) or \
            not all(isinstance(x, SymTensor) or _is_int(x) for x in carry):
        return None
    n0 = len(c.b.steps)
    try:  # a one-iteration trial finds how the body steps each counter
        probe_var = c.b.fresh(f"t_{c.name}_probe", "step")
        with c.b.repeat(c.name + "_probe", probe_var, 1):
            probe = [Counter(Lin.of(probe_var) + Lin.constant(x), x, x) if k in ints else x
                     for k, x in enumerate(carry)]
            outs = _inline(c, body_jaxpr, bconsts + probe)
        deltas = {}
        for k in ints:
            o = outs[k]
            if not isinstance(o, Counter):
                raise LoweringGap(f"carry {k} is not a counter stepped by a constant")
            d = o.lo - carry[k]
            if o != probe[k].shift(d):
                raise LoweringGap(f"carry {k} is not a counter stepped by a constant")
            deltas[k] = d
    except LoweringGap as e:
        log.debug("%s: while unrolled (%s)", c.name, e)
        return None
    finally:
        del c.b.steps[n0:]
    values = {k: carry[k] for k in ints}
    for trips in range(MAX_UNROLL + 1):
        state = [values[k] if k in values else x for k, x in enumerate(carry)]
        (keep_going,) = _inline(c, cond_jaxpr, cconsts + state)
        if len(c.b.steps) != n0 or not is_const(keep_going):
            del c.b.steps[n0:]
            return None
        if not keep_going:
            break
        values = {k: v + deltas[k] for k, v in values.items()}
    else:
        return None
    if trips < 2:
        return None
    return _try_repeat(c, body_jaxpr, bconsts, carry, [], trips, False, len(carry), [], deltas)


@lowers("while")
def while_lowering(c: JCtx, *args, cond_jaxpr, body_jaxpr, cond_nconsts: int, body_nconsts: int):
    """A Repeat step for a counted loop (see ``_while_repeat``); else unrolled while its condition
    folds to a number at every step; a data-dependent trip count is not lowered."""
    cconsts, bconsts = list(args[:cond_nconsts]), list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    done = _while_repeat(c, cond_jaxpr, body_jaxpr, cconsts, bconsts, carry)
    if done is not None:
        return done
    for _ in range(MAX_UNROLL):
        (keep_going,) = _inline(c, cond_jaxpr, cconsts + carry)
        if not is_const(keep_going):
            raise LoweringGap("a while loop whose condition depends on data (only static trip counts unroll)")
        if not keep_going:
            return carry
        carry = _inline(c, body_jaxpr, bconsts + carry)
    raise LoweringGap(f"a while loop of more than {MAX_UNROLL} steps")


@lowers("cond")
def cond_lowering(c: JCtx, index, *operands, branches, **_):
    """The taken branch when the index folds to a number; else a Cond step whose branches each
    copy their results into the same output tensors."""
    if is_const(index):
        k = max(0, min(int(index), len(branches) - 1))
        return _inline(c, branches[k], operands)
    if isinstance(index, Counter):
        raise LoweringGap("a cond on a loop counter")
    if index.shape != ():
        raise LoweringGap(f"a cond index of shape {index.shape}")
    idx = c.b.materialize(index, c.name + "_index")
    outs = [c.new_output(i, f"{c.name}_out{i}") for i in range(len(c.eqn.outvars))]
    bodies = []
    for b, branch in enumerate(branches):
        with c.b.branch() as body:
            results = _inline(c, branch, operands)
            for i, (dst, y) in enumerate(zip(outs, results)):
                if isinstance(y, Counter):
                    raise LoweringGap("a cond branch returns a loop counter")
                copy_at(c, dst, y, f"{c.name}_b{b}_out{i}")
        bodies.append(body)
    c.b.cond(c.name, idx.base, bodies, [o.base for o in outs])
    return outs
