"""Tensors a PyTorch model makes for itself: plain tensor attributes, and random draws in ``forward``.

Both the tracer (``solar_assets.translate.torch_tracer``) and the golden run
(``solar_assets.golden.golden``) apply the same rules, so the IR and the framework see the same values:

- A tensor kept as a plain attribute (``self.hidden = torch.randn(b, h)`` in ``__init__``, neither
  a parameter nor a buffer) is made a non-persistent buffer before tracing and before the golden run
  (``attributes_to_buffers``): torch.export then sees a buffer it may read and update (it refuses a
  "constant" that ``forward`` mutates), and the golden run records its values as ``buffer:<name>``.
- A tensor drawn at random inside ``forward`` (``torch.randn(layers, batch, hidden)`` as an LSTM's
  initial state) has values that do not change the cost, but validation needs the IR and the framework
  to use the same ones. Both use one fixed pattern instead of the random stream: element ``k`` (flat,
  row-major) of a ``randn`` / ``randn_like`` draw is ``sin(RANDOM_FREQ * k + RANDOM_PHASE)`` (values in
  [-1, 1]), of a ``rand`` / ``rand_like`` draw ``0.5 + 0.5 * sin(...)`` (in [0, 1]). In the IR it is one
  kernel that reads nothing and writes the tensor (``random_pattern_expr``); in the golden run
  ``deterministic_random()`` replaces the draws' values. ``randint`` draws ``floor(low + (high - low)·u)``
  of the uniform pattern ``u``, ``normal(mean, std)`` ``mean + std·z`` of the normal one (``bernoulli``
  and dropout export as a ``rand`` and a comparison). The validated program is the model with this
  pattern as its "random" values: the same ops, shapes and costs as the model as written.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

RANDOM_FREQ = 1.2345
RANDOM_PHASE = 0.5
NORMAL_DRAWS = ("randn", "randn_like")
UNIFORM_DRAWS = ("rand", "rand_like")
INTEGER_DRAWS = ("randint", "randint_like")  # floor(low + (high - low) · uniform pattern)
SCALED_NORMAL_DRAWS = ("normal",)  # mean + std · normal pattern


def attributes_to_buffers(model: Any) -> list[str]:
    """Make every plain tensor attribute of the model and its submodules a non-persistent buffer (in
    place); the qualified names made so, in module order."""
    import torch

    made = []
    for prefix, module in model.named_modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter) \
                    and not name.startswith("_"):
                delattr(module, name)
                module.register_buffer(name, value, persistent=False)
                made.append(f"{prefix}.{name}" if prefix else name)
    return made


def random_kind(op_name: str) -> str | None:
    """"normal" / "uniform" / "integer" / "scaled_normal" for an ATen random draw's overload packet
    name (``randn``, ``rand_like``, ``randint``, ``normal``), else None."""
    if op_name in NORMAL_DRAWS:
        return "normal"
    if op_name in UNIFORM_DRAWS:
        return "uniform"
    if op_name in INTEGER_DRAWS:
        return "integer"
    if op_name in SCALED_NORMAL_DRAWS:
        return "scaled_normal"
    return None


def integer_bounds(op_name: str, args: Sequence[Any]) -> tuple[Any, Any]:
    """(low, high) of a ``randint`` / ``randint_like`` call's arguments (``high`` alone means low 0)."""
    if op_name == "randint_like":
        rest = [a for a in args[1:] if not isinstance(a, (list, tuple))]
    else:
        rest = [a for a in args if not isinstance(a, (list, tuple))]
    return (0, rest[0]) if len(rest) == 1 else (rest[0], rest[1])


def normal_moments(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """(mean, std) of a ``normal`` call (each a number or a tensor; std 1 when not given)."""
    mean = kwargs.get("mean", args[0] if args else 0.0)
    std = kwargs.get("std", args[1] if len(args) > 1 and not isinstance(args[1], (list, tuple)) else 1.0)
    return mean, std


def random_pattern_expr(kind: str, loop_vars: Sequence[str], shape: Sequence[int]) -> str:
    """The IR expression of the pattern at the loop variables' point (row-major flat index)."""
    terms = []
    for i, var in enumerate(loop_vars):
        stride = math.prod(shape[i + 1:])
        terms.append(var if stride == 1 else f"{var} * {stride}")
    flat = " + ".join(terms) or "0"
    wave = f"sin({RANDOM_FREQ} * ({flat}) + {RANDOM_PHASE})"
    return wave if kind == "normal" else f"0.5 + 0.5 * {wave}"


def pattern_array(kind: str, shape: Sequence[int]) -> Any:
    """The pattern as a float64 NumPy array of ``shape`` (the JAX golden run's draws)."""
    import numpy as np

    wave = np.sin(RANDOM_FREQ * np.arange(math.prod(shape), dtype=np.float64) + RANDOM_PHASE)
    return (wave if kind == "normal" else 0.5 + 0.5 * wave).reshape(tuple(shape))


def random_pattern(kind: str, like: Any) -> Any:
    """The pattern as a torch tensor of ``like``'s shape, dtype and device (computed in float64)."""
    import torch

    k = torch.arange(like.numel(), dtype=torch.float64)
    wave = torch.sin(RANDOM_FREQ * k + RANDOM_PHASE)
    values = wave if kind == "normal" else 0.5 + 0.5 * wave
    return values.reshape(like.shape).to(dtype=like.dtype, device=like.device)


@contextlib.contextmanager
def deterministic_random(float_dtype: Any = None) -> Iterator[None]:
    """While active, every ``randn`` / ``rand`` (and ``_like``) draw returns ``random_pattern``; with
    ``float_dtype`` (the golden run's float64 pass), in that dtype: the model converted to float64
    draws float64 state, as it would had it been written for float64."""
    from torch.utils._python_dispatch import TorchDispatchMode

    import torch

    class _Pattern(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func.overloadpacket.__name__
            if name in ("rrelu_with_noise", "rrelu_with_noise_functional") and len(args) > 4 and args[4]:
                # training-mode rrelu: negative inputs scaled by lower + (upper - lower) · the uniform pattern
                x, lower, upper = args[0], float(args[2]), float(args[3])
                u = random_pattern("uniform", x if float_dtype is None else x.to(float_dtype))
                slope = lower + (upper - lower) * u
                result = torch.where(x >= 0, x, x * slope)
                return (result, torch.where(x >= 0, torch.ones_like(slope), slope)) \
                    if isinstance(out, tuple) else result
            if name == "bernoulli" and func is not torch.ops.aten.bernoulli_.float:
                # eager bernoulli is what the export spells ``rand(shape) < p``
                p = args[1] if len(args) > 1 else kwargs.get("p", args[0])
                u = random_pattern("uniform", out if float_dtype is None else out.to(float_dtype))
                return (u < p).to(out.dtype)
            if func is torch.ops.aten.bernoulli_.float and isinstance(args[1] if len(args) > 1 else
                                                                       kwargs.get("p", 0.5), (int, float)):
                # training-mode dropout's mask, drawn in place (eager ``native_dropout``): the same pattern
                p = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
                u = random_pattern("uniform", out if float_dtype is None else out.to(float_dtype))
                return args[0].copy_((u < p).to(args[0].dtype))
            kind = random_kind(name)
            if kind is None:
                return out
            if float_dtype is not None and out.is_floating_point():
                out = out.to(float_dtype)
            if kind == "integer":
                low, high = integer_bounds(name, args)
                u = random_pattern("uniform", out.to(torch.float64))
                return torch.floor(low + (high - low) * u).to(out.dtype)
            if kind == "scaled_normal":
                mean, std = normal_moments(args, kwargs)
                z = random_pattern("normal", out)
                return (mean + std * z).to(out.dtype)
            return random_pattern(kind, out)

    with _Pattern():
        yield


def buffer_state(model: Any) -> dict[str, Any]:
    """A copy of every buffer, to put back with ``restore_buffers`` after a forward that updated them."""
    return {name: b.detach().clone() for name, b in model.named_buffers()}


def restore_buffers(model: Any, state: dict[str, Any]) -> None:
    """Every buffer back to its value in ``state`` (the golden run's second, float64 forward must start
    where the first did: a ``forward`` that assigns ``self.hidden = ...`` rebinds the buffer)."""
    for qualified, value in state.items():
        prefix, _, name = qualified.rpartition(".")
        module = model.get_submodule(prefix) if prefix else model
        module._buffers[name] = value.clone()  # noqa: SLF001 - a buffer rebound in forward is only reachable here


# ---------------------------------------------------------------------------- constants made in forward
MAX_CONSTANT_TABLE = 64  # distinct entries a constant with no simpler structure may list in the IR


def _literal(x: float | int | bool) -> str:
    if isinstance(x, bool):
        text = "1" if x else "0"
    elif isinstance(x, int):
        text = str(x)
    elif x != x:
        text = "nan"
    elif x in (float("inf"), float("-inf")):
        text = "inf" if x > 0 else "-inf"
    else:
        text = repr(float(x))
    return f"({text})" if text.startswith("-") else text


def _python(x: Any) -> float | int | bool:
    return x.item() if hasattr(x, "item") else x


def constant_template(values: Any, loop_vars: Sequence[str], max_table: int = MAX_CONSTANT_TABLE) -> str | None:
    """The IR expression, at the loop variables' point, of a tensor whose values are known at trace
    time (a constant torch.export lifts out of ``forward``), or None when it has no compact form.

    A constant is written by its structure, so its size does not matter where the structure is
    simple: the axes along which it does not vary are dropped; what is left is one literal (an
    all-zero index table such as BigBird's random-attention blocks in eval mode), an affine
    function of the remaining indices (an ``arange``), or a table of at most ``max_table`` entries
    (a ``select`` chain on the flat index). The expression is exact: the affine form is accepted
    only where it reproduces every value bit for bit.
    """
    import numpy as np

    arr = np.asarray(values)
    if arr.ndim != len(loop_vars):
        raise ValueError(f"{arr.ndim}-d constant with {len(loop_vars)} loop variables")
    if arr.size == 0:
        return "0"
    varying = []
    for axis in range(arr.ndim):
        first = np.take(arr, [0], axis=axis)
        if not np.array_equal(arr, np.broadcast_to(first, arr.shape), equal_nan=arr.dtype.kind in "fc"):
            varying.append(axis)
    reduced = arr[tuple(slice(None) if a in varying else slice(0, 1) for a in range(arr.ndim))]
    reduced = reduced.reshape([arr.shape[a] for a in varying])
    v = [loop_vars[a] for a in varying]
    base = _python(reduced.reshape(-1)[0])
    if not varying:
        return _literal(base)
    affine = _affine(reduced, v, base)
    if affine is not None:
        return affine
    if reduced.size > max_table:
        return None
    strides = [int(np.prod(reduced.shape[i + 1:])) for i in range(reduced.ndim)]
    index = " + ".join(f"{var} * {s}" if s != 1 else var for var, s in zip(v, strides))
    flat = [_python(x) for x in reduced.reshape(-1)]
    expr = _literal(flat[-1])
    for k in range(len(flat) - 2, -1, -1):
        expr = f"select(({index}) == {k}, {_literal(flat[k])}, {expr})"
    return expr


def _affine(reduced: Any, loop_vars: Sequence[str], base: float | int | bool) -> str | None:
    """``base + Σ c_a·i_a`` where that reproduces every value exactly (integers and floats), else None."""
    import numpy as np

    if reduced.dtype.kind not in "iuf" or not np.all(np.isfinite(reduced)):
        return None
    coefs = []
    predicted = np.full(reduced.shape, base, dtype=np.float64)
    for axis, n in enumerate(reduced.shape):
        step = [0] * reduced.ndim
        step[axis] = 1 if n > 1 else 0
        c = float(reduced[tuple(step)]) - float(base)
        coefs.append(int(c) if reduced.dtype.kind in "iu" else c)
        shape = [1] * reduced.ndim
        shape[axis] = n
        predicted = predicted + c * np.arange(n, dtype=np.float64).reshape(shape)
    if not np.array_equal(predicted.astype(reduced.dtype), reduced):
        return None
    terms = [_literal(base)] + [f"{_literal(c)} * {var}" for c, var in zip(coefs, loop_vars) if c != 0]
    return " + ".join(terms)
