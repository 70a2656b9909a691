"""Complex tensors in the IR: two real planes, the real part and the imaginary part, each of the
component dtype (complex64 → two float32 tensors), so bytes are counted at their real width and
every kernel stays real arithmetic. A complex program output is two outputs, real then imaginary,
as the golden runs split them (``golden.golden``, ``golden.jax_golden``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solar_assets.translate.core.affine import SymTensor

PLANE_DTYPES = {"complex64": "float32", "complex128": "float64", "complex32": "float16", "chalf": "float16",
                "cfloat": "float32", "cdouble": "float64"}


@dataclass(frozen=True)
class ComplexPair:
    """A complex tensor as its real and imaginary planes (same shape, a real dtype)."""

    re: SymTensor
    im: SymTensor

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.re.shape)


def plane_dtype(dtype: Any) -> str | None:
    """The component dtype of a complex dtype (``torch.complex64`` / ``numpy.complex64``), else None."""
    name = str(dtype).rsplit(".", 1)[-1]
    return PLANE_DTYPES.get(name)


def complex_aware(fn):
    """Mark a lowering that takes ``ComplexPair`` operands (the tracers refuse complex operands to others)."""
    fn.complex_aware = True
    return fn


def has_complex(value: Any) -> bool:
    if isinstance(value, ComplexPair):
        return True
    if isinstance(value, (list, tuple)):
        return any(has_complex(v) for v in value)
    return False
