"""Calls and control flow: inlined sub-programs, unrolled loops, a cond with a static branch.

``jit`` / ``pjit`` / ``closed_call`` / ``remat`` and the primal of ``custom_jvp_call`` /
``custom_vjp_call`` are inlined (their IR is the body's). ``scan`` becomes a ``Repeat`` step (the
IR's static repeat: the body once, its kernels indexed by the step variable, the carry in state
tensors) when its carries are tensors; otherwise (a ``fori_loop`` counter the body indexes with)
it is unrolled: one copy of the body per step, the step's ``xs`` a static view of step i. Either
way its ``ys`` are copied into the stacked output. ``while`` unrolls when its condition folds to a number at every step (a ``fori_loop`` or
any loop with a static trip count); a data-dependent trip count is not lowered. ``cond`` is
lowered when its branch index folds to a number (the taken branch only); with a data-dependent
index it is not lowered (the IR has no branch step yet) and the tracer says so.
"""
from __future__ import annotations

import logging
from typing import Any

from solar_assets.translate.jax_lowering.context import JCtx, Lin, LoweringGap, SymTensor, is_const, lins, loop_vars
from solar_assets.translate.jax_lowering.registry import lowers
from solar_assets.translate.jax_lowering.walk import run_closed, run_jaxpr
from solar_assets.translate.torch_lowering.symbolic import view_dim

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


@lowers("jit", "pjit", "closed_call", "core_call")
def call_lowering(c: JCtx, *args, **params):
    return _inline(c, params.get("jaxpr") or params["call_jaxpr"], args)


@lowers("remat", "remat2", "checkpoint")
def remat_lowering(c: JCtx, *args, jaxpr, **_):
    return _inline(c, jaxpr, args)


@lowers("custom_jvp_call")
def custom_jvp_lowering(c: JCtx, *args, call_jaxpr, **_):
    return _inline(c, call_jaxpr, args)


@lowers("custom_vjp_call", "custom_vjp_call_jaxpr")
def custom_vjp_lowering(c: JCtx, *args, **params):
    body = params.get("call_jaxpr") or params.get("fun_jaxpr")
    if body is None:
        raise LoweringGap(f"custom_vjp_call without a primal jaxpr (params: {sorted(params)})")
    return _inline(c, body, args)


def _step_view(x, i: int | Lin):
    """Step ``i`` (a number, or the repeat variable) of a scanned-over array: a view dropping the
    leading axis."""
    if is_const(x):
        return x
    first = i if isinstance(i, Lin) else Lin.constant(i)
    old_of_new = [first] + [Lin.of(view_dim(d - 1)) for d in range(1, len(x.shape))]
    return x.reindex(x.shape[1:], old_of_new)


def _copy(c: JCtx, dst: SymTensor, src, hint: str, lead: list[Lin] | None = None) -> None:
    """``dst[lead..., i...] = src[i...]`` over ``src``'s shape (``dst``'s shape without ``lead``)."""
    lead = lead or []
    shape = dst.shape[len(lead):]
    v = loop_vars("i", len(shape))
    idx = lins(v)
    c.b.kernel(hint, list(zip(v, shape)), dst.access(lead + idx), "=", c.read(src, idx, shape))


def _scan_repeat(c: JCtx, jaxpr, consts, carry, xs, length: int, reverse: bool, num_carry: int, ys_out):
    """The scan as one Repeat step: the carry lives in state tensors written at the end of each
    iteration, step t's ``xs`` are views at t, its ``ys`` are copied to row t."""
    states = []
    for k, x in enumerate(carry):
        state = c.b.declare(f"{c.name}_carry{k}", c.out_shape(k), c.out_dtype(k))
        _copy(c, state, x, f"{c.name}_carry{k}_init")
        states.append(state)
    var = c.b.fresh(f"t_{c.name}", "step")
    with c.b.repeat(c.name, var, length):
        step = Lin.constant(length - 1) + Lin.of(var, -1) if reverse else Lin.of(var)
        outs = _inline(c, jaxpr, consts + states + [_step_view(x, step) for x in xs])
        for n, (dst, y) in enumerate(zip(ys_out, outs[num_carry:])):
            if dst is not None:
                _copy(c, dst, y, f"{c.name}_ys{n}", [step])
        bases = {s.base for s in states}
        new = []
        for k, x in enumerate(outs[:num_carry]):  # a carry that reads a state is copied out first
            if isinstance(x, SymTensor) and x.base in bases and x != states[k]:
                x = c.b.materialize(x, f"{c.name}_next{k}", force=True)
            new.append(x)
        for k, (state, x) in enumerate(zip(states, new)):
            if x != state:
                _copy(c, state, x, f"{c.name}_carry{k}_next")
    return states + ys_out


@lowers("scan")
def scan_lowering(c: JCtx, *args, jaxpr, num_consts: int, num_carry: int, length: int, reverse: bool = False,
                  **_):
    """A Repeat step when every carry is a tensor; unrolled when a carry is a number the body
    needs to know (a ``fori_loop`` counter indexing with ``dynamic_slice``) or the body does not
    lower with a symbolic step."""
    consts, carry, xs = list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]), \
        list(args[num_consts + num_carry:])
    ys_out = [None if type(c.eqn.outvars[num_carry + n]).__name__ == "DropVar"
              else c.new_output(num_carry + n, f"{c.name}_ys{n}") for n in range(len(c.eqn.outvars) - num_carry)]
    if length > 1 and carry and all(isinstance(x, SymTensor) for x in carry):
        try:
            return _scan_repeat(c, jaxpr, consts, carry, xs, length, reverse, num_carry, ys_out)
        except LoweringGap as e:
            log.debug("%s: scan unrolled (%s)", c.name, e)
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        outs = _inline(c, jaxpr, consts + carry + [_step_view(x, i) for x in xs])
        carry = outs[:num_carry]
        for n, (dst, y) in enumerate(zip(ys_out, outs[num_carry:])):
            if dst is not None:  # an unused output
                _copy(c, dst, y, f"{c.name}_ys{n}_step{i}", [Lin.constant(i)])
    return carry + ys_out


@lowers("while")
def while_lowering(c: JCtx, *args, cond_jaxpr, body_jaxpr, cond_nconsts: int, body_nconsts: int):
    cconsts, bconsts = list(args[:cond_nconsts]), list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
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
    if not is_const(index):
        raise LoweringGap("a cond whose branch index depends on data (only a static index is lowered; "
                          "the IR has no branch step yet)")
    k = max(0, min(int(index), len(branches) - 1))
    return _inline(c, branches[k], operands)
