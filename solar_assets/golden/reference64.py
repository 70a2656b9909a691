"""The float64 reference of a PyTorch workload that respects the file's casts.

Casting the model to float64 (``model.to(torch.float64)``) breaks any forward that names a
dtype: ``x.to(torch.float16)`` then meets float64 weights (``Half != double``), and a bf16 or fp8
model quantises nothing. Instead the model runs as written under ``Float64Mode``, a
``TorchDispatchMode`` that sees every ATen op:

* every float tensor an op reads is widened to float64 (exact: bf16, fp16, fp8 and float32
  values are all float64 values), and the default dtype is float64, so arithmetic runs in
  float64 whatever dtype the file stores;
* a float dtype an op asks for (``_to_copy(dtype=…)``, ``sum(dtype=…)``, ``zeros(dtype=…)``)
  runs in float64, and where that dtype is narrow (bf16, fp16, fp8) the result is rounded to it
  by PyTorch's own cast and widened back: the quantisation the file asks for is kept, exactly as
  the framework rounds it (fp8 e4m3 saturates at ±448);
* an op writing into a tensor in place (``copy_`` into a bf16 buffer) writes it as stored, so
  the value is rounded to that tensor's dtype;
* an op with no float64 kernel (``_scaled_mm``, fp8 only) runs as its definition
  (``FLOAT64_FORMS``), rounded to its output dtype where that is narrow.

What this cannot follow: a forward that branches on a tensor's dtype sees float64, and an
in-place write of a float64 value into a tensor created in forward with a narrow dtype is not
rounded (the tensor was created in float64). Neither occurs in the shipped workloads.

The executor keeps the same rule for the IR (``execute.interpreter``: a kernel that converts into a
narrow dtype rounds), so an IR and this reference agree on where a value is quantised. Storage
rounding of ordinary narrow ops (a bf16 matmul's output) is left out of both: where it matters,
validation compares with the framework's own output at the dtype's tolerance
(``validate.compare``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from solar_assets.ir.dtypes import NARROW_FLOAT_DTYPES, ir_dtype_name


def _mutated_positions(op: Any) -> set[int]:
    schema = getattr(op, "_schema", None)
    if schema is None:
        return set()
    return {i for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write}


def _scaled_mm64(a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False):
    """``torch._scaled_mm`` by its definition: (a @ b) · scale_a · scale_b (+ bias), in float64."""
    if scale_result is not None:
        raise NotImplementedError("_scaled_mm with scale_result in the float64 reference")
    out = (a @ b) * scale_a * scale_b
    return out if bias is None else out + bias


def float64_forms() -> dict[Any, tuple[Callable[..., Any], Callable[[tuple, dict], Any]]]:
    """Ops with no float64 kernel: (their float64 definition, the output dtype the file asked for)."""
    import torch

    def scaled_mm_dtype(args: tuple, kwargs: dict) -> Any:
        out_dtype = args[6] if len(args) > 6 else kwargs.get("out_dtype")
        return out_dtype if out_dtype is not None else args[0].dtype

    return {torch.ops.aten._scaled_mm.default: (_scaled_mm64, scaled_mm_dtype)}


def float64_mode() -> Any:
    """A ``TorchDispatchMode`` that runs every op's float arithmetic in float64 and keeps the narrow
    casts the program asks for (module docstring); used with the default dtype set to float64."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    f64 = torch.float64
    forms = float64_forms()

    def widen(x: Any) -> Any:
        return x.to(f64) if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != f64 else x

    class Float64Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in forms:
                form, out_dtype = forms[func]
                asked = out_dtype(args, kwargs)
                result = form(*tree_map(widen, args), **tree_map(widen, kwargs))
                return result.to(asked).to(f64) if ir_dtype_name(asked) in NARROW_FLOAT_DTYPES else result
            mutated = _mutated_positions(func)
            args = tuple(a if i in mutated else tree_map(widen, a) for i, a in enumerate(args))
            kwargs = {k: (v if k == "out" else tree_map(widen, v)) for k, v in kwargs.items()}
            asked = kwargs.get("dtype")
            narrow = None
            if isinstance(asked, torch.dtype) and asked.is_floating_point:
                kwargs["dtype"] = f64
                narrow = asked if ir_dtype_name(asked) in NARROW_FLOAT_DTYPES else None
            result = func(*args, **kwargs)
            if mutated:
                return result
            if narrow is not None:
                return tree_map(lambda t: t.to(narrow).to(f64) if isinstance(t, torch.Tensor) else t, result)
            return tree_map(widen, result)

    return Float64Mode()


@contextmanager
def in_float64() -> Iterator[None]:
    """``float64_mode`` with float64 as the default dtype, both restored afterwards."""
    import torch

    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with float64_mode():
            yield
    finally:
        torch.set_default_dtype(default)


def widened(x: Any) -> Any:
    """A float tensor as float64 (exact), also inside a tuple or list of them; anything else as it is."""
    import torch
    from torch.utils._pytree import tree_map

    return tree_map(lambda t: t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point()
                    and t.dtype != torch.float64 else t, x)


def run_float64(fn: Callable[..., Any], args: Sequence[Any], called_with: list[Any] | None = None) -> Any:
    """``fn(*args)`` with float arithmetic in float64 and narrow casts rounded (module docstring).
    A module ``fn`` is converted to float64 in place (its parameters and buffers, exactly).
    ``called_with``, when given, receives the (widened) arguments ``fn`` ran on, which hold what
    an in-place update of an input wrote."""
    import torch

    if isinstance(fn, torch.nn.Module):  # parameters and buffers too (exact): some composite ops
        fn = fn.to(torch.float64)  # (conv2d) check their operands' dtypes before any dispatch mode sees them
    widened_args = [widened(a) for a in args]
    if called_with is not None:
        called_with[:] = widened_args
    with in_float64():
        return fn(*widened_args)
