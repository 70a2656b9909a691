"""Walk a jaxpr's equations in order, lowering each through the table.

Rank-0 equations whose operands are all known numbers are evaluated on the spot (by binding
the primitive to them): loop counters, static indices and ``while`` conditions then stay Python
numbers, which is what lets ``fori_loop`` / ``while`` with a static trip count unroll and
``dynamic_slice`` at a counter become a static view. Everything else goes through a lowering.
A loop counter inside a Repeat body is a ``Counter`` (affine in the repeat variable): the few
integer operations on it are applied here (``counter_eqn``), any other use is a ``LoweringGap``.
"""
from __future__ import annotations

import functools
import keyword
import logging
import os
import re
from typing import Any, Sequence

import numpy as np

from ir_schemas import Origin
from solar_assets.ir.expr import CONSTANT_NAMES, SCALAR_FUNCTIONS
from solar_assets.translate.core.complex import has_complex
from solar_assets.translate.out_of_scope import reason_suffix
from solar_assets.translate.jax_lowering.context import Counter, JCtx, LoweringGap, SymTensor, Value, is_const
from solar_assets.translate.jax_lowering.random import RandomKey
from solar_assets.translate.jax_lowering.registry import find_lowering
from solar_assets.translate.core.builder import ProgramBuilder
from solar_assets.workloads.jax_training import OPTIMIZER_SCOPE

log = logging.getLogger(__name__)

# Rank-0 primitives with every operand known are folded; these never are (they have effects or
# sub-programs handled by their lowerings).
NOT_FOLDED = {"scan", "while", "cond", "jit", "pjit", "closed_call", "core_call", "custom_jvp_call",
              "custom_vjp_call", "custom_vjp_call_jaxpr", "remat", "remat2", "checkpoint", "iota",
              "random_seed", "random_wrap", "random_unwrap", "random_bits", "random_split", "random_fold_in",
              "random_gamma"}


class PrimitiveError(Exception):
    """A primitive with no lowering, or one that failed, with where it is in the source."""

    def __init__(self, primitive: str, where: str, message: str):
        super().__init__(message)
        self.primitive, self.where = primitive, where


def source_line(eqn: Any) -> str:
    """``file.py:12 (forward)`` for the user's line that made the equation, or ''."""
    try:
        from jax._src import source_info_util

        return source_info_util.summarize(eqn.source_info)
    except Exception:  # noqa: BLE001 - an internal API: no line is better than no message
        return ""


def user_line(eqn: Any) -> str:
    """``model.py:12``: the innermost frame that made the equation outside JAX, Flax and solar
    (a ``nn.Dense`` call is the user's ``nn.Dense(...)(x)``, not Flax's ``linear.py``), or ''."""
    try:
        from jax._src import source_info_util

        skip = _library_dirs()
        for frame in source_info_util.user_frames(eqn.source_info.traceback):
            if not frame.file_name.startswith(skip):
                return f"{os.path.basename(frame.file_name)}:{frame.start_line}"
        return ""
    except Exception:  # noqa: BLE001 - an internal API: no line is better than no origin
        return ""


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    import importlib.util

    dirs = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]  # solar_assets/
    for name in ("flax", "optax", "jax"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            dirs.append(os.path.dirname(spec.origin))
    return tuple(d + os.sep for d in dirs)


# id(literal) -> its value in the float64 trace of the same function (see jax_tracer.literal_overrides):
# a float32 jaxpr carries float32-rounded constants (0.044714998 for 0.044715), and the float64
# golden run uses the exact ones, so the IR takes the exact ones where the two traces line up.
LITERAL_OVERRIDES: dict[int, Value] = {}


def literal_value(x: Any) -> Value:
    """A jaxpr literal as a Python number."""
    if id(x) in LITERAL_OVERRIDES:
        return LITERAL_OVERRIDES[id(x)]
    val = np.asarray(x.val)
    if val.shape != ():
        raise LoweringGap(f"a non-scalar literal of shape {val.shape}")
    item = val.item()
    return bool(item) if val.dtype == np.bool_ else item


def read_var(env: dict[Any, Value], v: Any) -> Value:
    if hasattr(v, "val") and type(v).__name__ == "Literal":
        return literal_value(v)
    return env[v]


def _fold(eqn: Any, values: Sequence[Value]) -> list[Value] | None:
    """Evaluate a rank-0 equation on known numbers, or None when it cannot be."""
    if eqn.primitive.name in NOT_FOLDED or not all(is_const(v) for v in values):
        return None
    if any(getattr(o.aval, "shape", None) != () for o in eqn.outvars):
        return None
    if eqn.primitive.name == "convert_element_type":  # keep float64 precision; cast like C otherwise
        kind = np.dtype(eqn.params["new_dtype"]).kind
        v = values[0]
        return [float(v) if kind == "f" else bool(v) if kind == "b" else int(v)]
    try:
        import jax

        # in float64 (x64 enabled in scope): the float64 golden run computes these constants in
        # float64 too, and the IR's arithmetic is float64 whatever the storage dtype
        with jax.enable_x64(True):
            args = [np.asarray(v, dtype=np.float64 if np.dtype(iv.aval.dtype).kind == "f" else iv.aval.dtype)
                    for v, iv in zip(values, eqn.invars)]
            out = eqn.primitive.bind(*args, **eqn.params)
    except Exception:  # noqa: BLE001 - not foldable: lower it instead
        return None
    outs = out if eqn.primitive.multiple_results else [out]
    result = []
    for o in outs:
        a = np.asarray(o)
        result.append(bool(a.item()) if a.dtype == np.bool_ else a.item())
    return result


class _EqnFrame:
    """An equation being lowered: its origin path, its module path (its name stack under the
    enclosing equations') and how many sub-programs it has lowered so far."""

    def __init__(self, path: str, module: str = "", source: str = "", primitive: str = ""):
        self.path, self.module, self.source, self.calls = path, module, source, 0
        self.primitive = primitive


# the equations being lowered, outermost first: nested jaxprs (pjit, scan bodies, cond branches) are
# lowered inside their equation's lowering, and their equations' origins extend its path
_EQN_STACK: list[_EqnFrame] = []


def _eqn_prefix() -> str:
    """The origin prefix of the equations of the jaxpr about to be lowered: ``eqn`` at the top,
    ``eqn3.`` inside equation 3's first sub-program, ``eqn3.c1.`` inside its second (a cond's next
    branch, a loop body inlined again), so every origin names one equation call."""
    if not _EQN_STACK:
        return "eqn"
    frame = _EQN_STACK[-1]
    k, frame.calls = frame.calls, frame.calls + 1
    return f"{frame.path}." if k == 0 else f"{frame.path}.c{k}."


def current_eqn_path() -> str | None:
    """The origin path of the equation being lowered (None outside any)."""
    return _EQN_STACK[-1].path if _EQN_STACK else None


def current_eqn_module() -> str:
    """The module path of the equation being lowered ('' outside any)."""
    return _EQN_STACK[-1].module if _EQN_STACK else ""


def current_eqn_source() -> str:
    """The user's line of the equation being lowered ('' outside any)."""
    return _EQN_STACK[-1].source if _EQN_STACK else ""


def eqn_module(eqn: Any, enclosing: str) -> str:
    """The equation's name stack under ``enclosing`` (a sub-program's equations carry theirs
    relative to the call: ``relu``'s inside ``Model/Block_0``), '' when neither has one."""
    try:
        own = str(eqn.source_info.name_stack)
    except AttributeError:
        own = ""
    if not enclosing or own.startswith(enclosing):
        return own
    return f"{enclosing}/{own}" if own else enclosing


# the number of equations of the top-level jaxpr being lowered (set by ``run_jaxpr`` at the top)
_TOP_EQNS: list[int] = []


def whole_program_call(path: str) -> bool:
    """Whether ``path`` is the only equation of the top-level program (a model under ``jax.jit``)."""
    return path == "eqn0" and bool(_TOP_EQNS) and _TOP_EQNS[-1] == 1


def eqn_origin(eqn: Any, path: str, module: str | None = None, source: str | None = None) -> Origin:
    """The origin of the steps lowered from one equation: its path, its primitive, its module
    path (``eqn_module``: a Flax module path such as ``Model/Dense_0``; '' when none) and the
    user's line."""
    if module is None:
        module = eqn_module(eqn, "")
    phase = eqn_phase(module)
    module = _AUTODIFF_WRAPPER.sub("", module).replace(")", "") if phase else module
    parts = [p for p in module.split("/") if p and p != OPTIMIZER_SCOPE]
    module = "/".join(parts)
    scope = tuple(("/".join(parts[:i + 1]), "") for i in range(len(parts)))
    top = path.split(".", 1)[0]
    call_op = eqn.primitive.name if top == path else next(
        (f.primitive for f in _EQN_STACK if f.path == top), "")
    return Origin(node=path, op=eqn.primitive.name, module=module, scope=scope,
                  source=user_line(eqn) if source is None else source, call=top, call_op=call_op, phase=phase)


_AUTODIFF_WRAPPER = re.compile(r"(transpose|jvp)\(")


def eqn_phase(name_stack: str) -> str:
    """Of a training step's equation (``workloads.jax_training``), from its name stack: the update
    under ``solar_optimizer``, autograd's backward under ``transpose(jvp(…))``, its forward under
    ``jvp(…)``; '' for an equation of one forward pass."""
    if OPTIMIZER_SCOPE in name_stack.split("/"):
        return "optimizer"
    if "transpose(" in name_stack:
        return "backward"
    return "forward" if "jvp(" in name_stack else ""


# node-wise validation: when a dict, the top-level jaxpr's values by key (``const<i>``, ``in<i>``,
# ``eqn<i>#<k>``) as they are bound (``solar_assets.validate.nodewise``)
TOP_VALUES: dict[str, Value] | None = None


def run_jaxpr(b: ProgramBuilder, jaxpr: Any, consts: Sequence[Value], args: Sequence[Value]) -> list[Value]:
    """Lower an (open) jaxpr with its constvars bound to ``consts`` and invars to ``args``; every
    step an equation emits carries that equation's origin (``eqn_origin``)."""
    prefix = _eqn_prefix()
    top = prefix == "eqn"
    if top:
        _TOP_EQNS.append(len(jaxpr.eqns))
    try:
        return _run_jaxpr(b, jaxpr, consts, args, prefix)
    finally:
        if top:
            _TOP_EQNS.pop()


def _run_jaxpr(b: ProgramBuilder, jaxpr: Any, consts: Sequence[Value], args: Sequence[Value], prefix: str) -> list[Value]:
    env: dict[Any, Value] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    if len(args) != len(jaxpr.invars):
        raise LoweringGap(f"a sub-program takes {len(jaxpr.invars)} arguments, given {len(args)}")
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for i, eqn in enumerate(jaxpr.eqns):
        values = [read_var(env, v) for v in eqn.invars]
        outs = key_plumbing(eqn, values)
        if outs is None:
            outs = counter_eqn(eqn, values) if any(isinstance(v, Counter) for v in values) else _fold(eqn, values)
        if outs is None:
            path, start = f"{prefix}{i}", len(b.steps)
            module = eqn_module(eqn, current_eqn_module())
            source = user_line(eqn) or current_eqn_source()  # a sub-program's line: its call's
            _EQN_STACK.append(_EqnFrame(path, module, source, eqn.primitive.name))
            try:
                outs = lower_eqn(b, eqn, values)
            finally:
                _EQN_STACK.pop()
            b.tag_origin(start, eqn_origin(eqn, path, module, source))
        for v, x in zip(eqn.outvars, outs):
            if type(v).__name__ != "DropVar":
                env[v] = x
        if TOP_VALUES is not None and prefix == "eqn":
            TOP_VALUES.update({f"eqn{i}#{k}": x for k, x in enumerate(outs)})
    if TOP_VALUES is not None and prefix == "eqn":
        TOP_VALUES.update({f"const{n}": env[v] for n, v in enumerate(jaxpr.constvars)})
        TOP_VALUES.update({f"in{n}": env[v] for n, v in enumerate(jaxpr.invars)})
    return [read_var(env, v) for v in jaxpr.outvars]


def key_plumbing(eqn: Any, values: Sequence[Value]) -> list[Value] | None:
    """An equation that only moves PRNG keys (``split``, ``fold_in``, slicing or reshaping a key
    array): its results are keys too (``jax_lowering.random``: no draw reads their bits); None
    for any other equation, and for the draws and raw bits, which their lowerings take."""
    if eqn.primitive.name in ("jit", "pjit", "random_gamma", "random_bits") or \
            not any(isinstance(v, RandomKey) for v in values):
        return None
    if any(isinstance(v, (SymTensor, Counter)) for v in values):
        return None  # a key mixed with data: the lowering says what it cannot do
    return [RandomKey() for _ in eqn.outvars]


COMPARE = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
           "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
COUNTER_USES = {"dynamic_slice", "dynamic_update_slice"}  # lowerings that take a Counter start


def counter_eqn(eqn: Any, values: Sequence[Value]) -> list[Value] | None:
    """An integer operation on a loop counter (None: a lowering that accepts counters runs)."""
    name = eqn.primitive.name
    if name in COUNTER_USES:
        return None
    if name == "select_n" and is_const(values[0]):  # a static choice (negative-index normalising)
        return [values[1 + int(values[0])]]
    ctr = next(v for v in values if isinstance(v, Counter))
    other = [v for v in values if v is not ctr]
    integral = all(isinstance(v, int) and not isinstance(v, bool) for v in other)
    if name == "convert_element_type" and np.dtype(eqn.params["new_dtype"]).kind in "iu":
        return [ctr]
    if name in COMPARE and len(values) == 2 and integral and other:  # static when the same over the range
        k = other[0]
        seen = {COMPARE[name](*((v, k) if values[0] is ctr else (k, v))) for v in (ctr.lo, ctr.hi)}
        if name in ("eq", "ne") and ctr.lo <= k <= ctr.hi and ctr.lo != ctr.hi:
            seen = {True, False}
        if len(seen) == 1:
            return [seen.pop()]
    if name in ("add", "sub", "mul") and len(values) == 2 and integral and other:
        k = other[0]
        if name == "add":
            return [ctr.shift(k)]
        if name == "sub" and values[0] is ctr:
            return [ctr.shift(-k)]
        if name == "mul":
            return [ctr.times(k)]
    raise LoweringGap(f"the loop counter is used by {name} (only shifts, scales and slice starts are affine)")


def run_closed(b: ProgramBuilder, closed: Any, args: Sequence[Value]) -> list[Value]:
    """Lower a ClosedJaxpr whose consts are concrete arrays (rank-0 ones become numbers)."""
    consts = []
    for c in closed.consts:
        a = np.asarray(c)
        if a.shape != ():
            raise LoweringGap("a sub-program closes over an array constant")
        consts.append(bool(a.item()) if a.dtype == np.bool_ else a.item())
    return run_jaxpr(b, closed.jaxpr, consts, args)


def lower_eqn(b: ProgramBuilder, eqn: Any, values: Sequence[Value]) -> list[Value]:
    name = eqn.primitive.name
    lowering = find_lowering(name)
    where = source_line(eqn)
    at = f" at {where}" if where else ""
    if lowering is None:
        raise PrimitiveError(name, where, f"no lowering for JAX primitive {name}{at} ({_eqn_text(eqn)})"
                             + reason_suffix(name))
    hint = name.replace("-", "_")
    if keyword.iskeyword(hint) or hint in SCALAR_FUNCTIONS or hint in CONSTANT_NAMES:
        hint += "_"  # a tensor named 'and' or 'max' would not read as a name in a kernel statement
    if has_complex(list(values)) and not getattr(lowering, "complex_aware", False):
        from solar_assets.translate.jax_lowering.complex_ops import COMPLEX_LOWERINGS

        lowering = COMPLEX_LOWERINGS.get(name)
        if lowering is None:
            raise PrimitiveError(name, where, f"cannot lower JAX primitive {name}{at}: complex operands")
    try:
        out = lowering(JCtx(b, eqn, hint), *values, **eqn.params)
    except PrimitiveError:
        raise
    except LoweringGap as e:
        raise PrimitiveError(name, where, f"cannot lower JAX primitive {name}{at}: {e}") from None
    return list(out) if eqn.primitive.multiple_results else [out]


def _eqn_text(eqn: Any) -> str:
    text = " ".join(str(eqn).split())
    return text if len(text) <= 160 else text[:159] + "…"
