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


# (real template, imaginary template) over the reads (a, b, p, q) of x = a + bi, y = p + qi
COMPLEX_MUL = ("{0} * {2} - {1} * {3}", "{0} * {3} + {1} * {2}")
COMPLEX_DIV = ("({0} * {2} + {1} * {3}) / ({2} * {2} + {3} * {3})",
               "({1} * {2} - {0} * {3}) / ({2} * {2} + {3} * {3})")


def parts(x: Any) -> tuple:
    """(real, imaginary) of an operand: a real tensor or number has a zero imaginary part."""
    return (x.re, x.im) if isinstance(x, ComplexPair) else (x, 0.0)


def plane_of(value: Any, which: int) -> Any:
    """``value`` with every ``ComplexPair`` in it (lists and dicts too) replaced by its real (0) or
    imaginary (1) plane: the arguments of a real lowering applied to one plane."""
    if isinstance(value, ComplexPair):
        return value.re if which == 0 else value.im
    if isinstance(value, (list, tuple)):
        return type(value)(plane_of(v, which) for v in value)
    if isinstance(value, dict):
        return {k: plane_of(v, which) for k, v in value.items()}
    return value


def plane(c: Any, template: str, *operands: Any, i: int | None = None, hint: str = "") -> SymTensor:
    """One real plane over output ``i``'s shape, in its (component) dtype: ``template`` over the
    operands' reads, broadcast (``c`` a frontend's lowering context)."""
    from solar_assets.translate.core.builder import lins, loop_vars

    shape = c.out_shape(i)
    out = c.b.declare(c.name + hint, shape, c.out_dtype(i))
    v = loop_vars("i", len(shape))
    idx = lins(v)
    c.b.kernel(out.base, list(zip(v, shape)), out.access(idx), "=",
               template.format(*(c.read(x, idx, shape) for x in operands)))
    return out


def pair(c: Any, re_template: str, im_template: str, *operands: Any, i: int | None = None) -> ComplexPair:
    """Output ``i`` as two planes, each one kernel over the operands."""
    return ComplexPair(plane(c, re_template, *operands, i=i, hint="_re"),
                       plane(c, im_template, *operands, i=i, hint="_im"))
