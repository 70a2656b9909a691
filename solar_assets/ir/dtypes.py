"""The IR's tensor dtypes, once: width in bytes, kind, NumPy storage, framework spellings, rounding.

Every stage that meets a dtype reads this table: the two tracers (torch and JAX spellings map to
one IR name), the einsum graph (bytes at each tensor's own width: an fp8 element is 1 byte, a
bf16 one 2), the executor (rounding to a narrow float where a kernel converts into it) and the
validator (tolerances per dtype). NumPy has no bf16 or fp8, so those go through ``ml_dtypes``
(installed with JAX).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class DTypeInfo:
    """What solar needs to know about one IR dtype."""

    name: str  # the IR spelling (``ir_schemas.DType``)
    bytes: int  # width of one element in memory
    kind: str  # 'f' float, 'i' integer, 'b' bool
    mantissa_bits: int = 0  # stored fraction bits of a float (bf16: 7, fp8 e4m3: 3)


DTYPES: dict[str, DTypeInfo] = {d.name: d for d in (
    DTypeInfo("float64", 8, "f", 52),
    DTypeInfo("float32", 4, "f", 23),
    DTypeInfo("bfloat16", 2, "f", 7),
    DTypeInfo("float16", 2, "f", 10),
    DTypeInfo("float8_e4m3fn", 1, "f", 3),
    DTypeInfo("float8_e5m2", 1, "f", 2),
    DTypeInfo("int64", 8, "i"),
    DTypeInfo("int32", 4, "i"),
    DTypeInfo("int16", 2, "i"),
    DTypeInfo("int8", 1, "i"),
    DTypeInfo("uint8", 1, "i"),
    DTypeInfo("bool", 1, "b"),
)}

BYTES_PER_ELEMENT: dict[str, int] = {name: d.bytes for name, d in DTYPES.items()}
FLOAT_DTYPES: tuple[str, ...] = tuple(n for n, d in DTYPES.items() if d.kind == "f")  # widest first
NARROW_FLOAT_DTYPES: frozenset[str] = frozenset({"float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"})
"""Floats below float32: a value converted into one of them is rounded by the executor too."""

# torch prints ``torch.bfloat16``, numpy / JAX ``bfloat16``: both reduce to the IR name.
_FRAMEWORK_ALIASES = {"float": "float32", "double": "float64", "half": "float16"}


def ir_dtype_name(dtype: Any) -> str | None:
    """The IR name of a torch, NumPy or JAX dtype (or its string); None when the IR has none."""
    text = str(dtype).removeprefix("torch.")
    if text.startswith("dtype("):  # repr of a numpy dtype
        text = text[len("dtype("):].strip("')\"")
    text = _FRAMEWORK_ALIASES.get(text, text)
    if text in DTYPES:
        return text
    try:
        text = str(np.dtype(dtype))
    except TypeError:
        return None
    return text if text in DTYPES else None


def numpy_dtype(dtype: str) -> np.dtype:
    """NumPy storage of an IR dtype: bf16 and fp8 through ml_dtypes."""
    if dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, dtype))
    return np.dtype(dtype)


E4M3FN_MAX = 448.0


def round_to(values: np.ndarray, dtype: str) -> np.ndarray:
    """``values`` rounded (to nearest even) to the narrow float ``dtype`` and widened back to their
    own dtype: what storing them in ``dtype`` keeps. float8_e4m3fn has no infinity: PyTorch
    saturates out-of-range values (±inf included) to ±448, and so does this (ml_dtypes alone
    would give NaN); float8_e5m2 overflows to ±inf like both."""
    if dtype not in NARROW_FLOAT_DTYPES:
        return values
    src = np.asarray(values)
    if dtype == "float8_e4m3fn":
        src = np.where(np.isnan(src), src, np.clip(src, -E4M3FN_MAX, E4M3FN_MAX))
    with np.errstate(over="ignore"):  # overflow to ±inf (e5m2, fp16) is the cast's meaning
        return src.astype(numpy_dtype(dtype)).astype(values.dtype)


def to_storable(a: np.ndarray) -> np.ndarray:
    """An array NumPy's npz can hold: bf16 and fp8 widened to float32, which holds every one of
    their values exactly (the IR's tensor declarations keep the narrow dtype)."""
    name = ir_dtype_name(a.dtype)
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return a.astype(np.float32)
    return a
