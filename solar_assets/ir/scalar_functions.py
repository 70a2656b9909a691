"""The IR's scalar functions, declared once: arity, the code the executor's generator emits, and
the vectorised reference the point evaluator uses.

The parser (``ir.expr``), the numba code generator (``execute.codegen``) and the point evaluator
(``validate.points``) all read this table, so a function added here is known, compiled and checked
everywhere at once. Special functions (log-gamma, Bessel functions, incomplete gamma, orthogonal
polynomials) are computed in float64 by SciPy's Cephes routines, which the generated kernels call
through ``execute.special_scalars`` and the point evaluator through ``scipy.special``: an
implementation independent of the frameworks whose outputs they are checked against.

Each call costs one FLOP in the bounds (a lower bound: no unit evaluates a transcendental in less).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class ScalarFunction:
    """One function of the IR's expression vocabulary."""

    name: str
    arity: int
    numba: str | None
    """Source over ``{0}``, ``{1}`` … for a generated kernel; None: ``codegen`` writes it itself
    (it reads an operand twice, or depends on the operand's kind)."""
    numpy: str
    """``module:attribute`` of the elementwise float64 reference the point evaluator calls."""
    accuracy: float = 0.0
    """Relative agreement to expect between the IR's float64 value and a framework's float64 run,
    where that is coarser than float64 itself: PyTorch's float64 Bessel functions are good to
    ~4e-7 relative; ``nextafter32`` steps one float32 ulp where the float64 run steps one float64
    ulp. 0: agree to float64 precision."""


def _special(name: str, arity: int, scipy_name: str | None = None, accuracy: float = 0.0) -> ScalarFunction:
    """A function the generated kernels call in ``execute.special_scalars`` (SciPy's Cephes in float64)."""
    args = ", ".join(f"{{{k}}}" for k in range(arity))
    return ScalarFunction(name, arity, f"_sf.{name}({args})",
                          f"scipy.special:{scipy_name}" if scipy_name else f"solar_assets.execute.special_scalars:{name}_ufunc",
                          accuracy)


_TABLE = [
    ScalarFunction("exp", 1, "math.exp({0})", "numpy:exp"),
    ScalarFunction("log", 1, "math.log({0})", "numpy:log"),
    ScalarFunction("log2", 1, "math.log2({0})", "numpy:log2"),
    ScalarFunction("log10", 1, "math.log10({0})", "numpy:log10"),
    ScalarFunction("tanh", 1, "math.tanh({0})", "numpy:tanh"),
    ScalarFunction("erf", 1, "math.erf({0})", "scipy.special:erf"),
    ScalarFunction("sqrt", 1, "math.sqrt({0})", "numpy:sqrt"),
    ScalarFunction("rsqrt", 1, "(1.0 / math.sqrt({0}))", "solar_assets.ir.scalar_numpy:rsqrt"),
    ScalarFunction("sigmoid", 1, "(1.0 / (1.0 + math.exp(-{0})))", "scipy.special:expit"),
    ScalarFunction("abs", 1, "abs({0})", "numpy:abs"),
    ScalarFunction("neg", 1, "(-{0})", "numpy:negative"),
    ScalarFunction("sin", 1, "math.sin({0})", "numpy:sin"),
    ScalarFunction("cos", 1, "math.cos({0})", "numpy:cos"),
    ScalarFunction("asin", 1, "np.arcsin({0})", "numpy:arcsin"),
    ScalarFunction("acos", 1, "np.arccos({0})", "numpy:arccos"),
    ScalarFunction("atan", 1, "math.atan({0})", "numpy:arctan"),
    ScalarFunction("floor", 1, "np.floor({0})", "numpy:floor"),
    ScalarFunction("ceil", 1, "np.ceil({0})", "numpy:ceil"),
    ScalarFunction("log1p", 1, "math.log1p({0})", "numpy:log1p"),
    ScalarFunction("expm1", 1, "math.expm1({0})", "numpy:expm1"),
    ScalarFunction("sign", 1, "np.sign({0})", "numpy:sign"),
    ScalarFunction("reciprocal", 1, "(1.0 / {0})", "solar_assets.ir.scalar_numpy:reciprocal"),
    ScalarFunction("relu", 1, None, "solar_assets.ir.scalar_numpy:relu"),
    ScalarFunction("max", 2, None, "solar_assets.ir.scalar_numpy:nan_max"),
    ScalarFunction("min", 2, None, "solar_assets.ir.scalar_numpy:nan_min"),
    ScalarFunction("pow", 2, "({0} ** {1})", "numpy:power"),
    ScalarFunction("fmod", 2, None, "numpy:fmod"),
    ScalarFunction("atan2", 2, "math.atan2({0}, {1})", "numpy:arctan2"),
    ScalarFunction("hypot", 2, "math.hypot({0}, {1})", "numpy:hypot"),
    ScalarFunction("copysign", 2, "math.copysign({0}, {1})", "numpy:copysign"),
    ScalarFunction("select", 3, None, "solar_assets.ir.scalar_numpy:select"),
    # the next float32 / float64 after x towards y (a float32 step is not a float64 one)
    ScalarFunction("nextafter32", 2, "np.nextafter(np.float32({0}), np.float32({1}))",
                   "solar_assets.ir.scalar_numpy:nextafter32", accuracy=2.0 ** -22),
    ScalarFunction("nextafter", 2, "np.nextafter({0}, {1})", "numpy:nextafter"),
    # special functions (SciPy's Cephes, float64)
    _special("lgamma", 1, "gammaln"),
    _special("digamma", 1, "psi"),
    _special("erfinv", 1, "erfinv"),
    _special("erfcx", 1, "erfcx"),
    _special("ndtri", 1, "ndtri"),
    _special("log_ndtr", 1, "log_ndtr"),
    _special("bessel_i0", 1, "i0"),
    _special("bessel_i0e", 1, "i0e"),
    _special("bessel_i1", 1, "i1"),
    _special("bessel_i1e", 1, "i1e"),
    _special("bessel_j0", 1, "j0", accuracy=1e-6),
    _special("bessel_j1", 1, "j1", accuracy=1e-6),
    _special("bessel_y0", 1, "y0", accuracy=1e-6),
    _special("bessel_y1", 1, "y1", accuracy=1e-6),
    _special("bessel_k0", 1, "k0"),
    _special("bessel_k1", 1, "k1"),
    _special("bessel_k0e", 1, "k0e"),
    _special("bessel_k1e", 1, "k1e"),
    _special("gammainc", 2, "gammainc"),  # regularised lower incomplete gamma P(a, x)
    _special("gammaincc", 2, "gammaincc"),  # regularised upper incomplete gamma Q(a, x)
    _special("betainc", 3, "betainc"),  # regularised incomplete beta I_x(a, b)
    _special("zeta", 2, "zeta"),  # Hurwitz zeta(x, q)
    # orthogonal polynomials of integer degree n (the second argument, truncated), by recurrence
    *(_special(f"{family}_poly", 2) for family in (
        "chebyshev_t", "chebyshev_u", "chebyshev_v", "chebyshev_w", "hermite_h", "hermite_he", "laguerre_l",
        "legendre_p")),
]
FUNCTIONS: dict[str, ScalarFunction] = {f.name: f for f in _TABLE}
ARITY: dict[str, int] = {f.name: f.arity for f in _TABLE}


def expression_accuracy(expressions: list[str]) -> tuple[float, list[str]]:
    """The coarsest ``accuracy`` of the functions these kernel expressions call, and their names."""
    import re

    called = {m for e in expressions for m in re.findall(r"\b([a-z_][a-z0-9_]*)\(", e)}
    coarse = sorted(n for n in called if n in FUNCTIONS and FUNCTIONS[n].accuracy > 0)
    return max((FUNCTIONS[n].accuracy for n in coarse), default=0.0), coarse


def uses_special(source: str) -> bool:
    """Whether generated source calls ``execute.special_scalars`` (so it must import it)."""
    return "_sf." in source


@cache
def numpy_reference(name: str) -> Callable[..., Any]:
    """The point evaluator's elementwise implementation of ``name``."""
    module, attribute = FUNCTIONS[name].numpy.split(":")
    return getattr(importlib.import_module(module), attribute)
