"""Special functions for generated kernels: SciPy's Cephes routines called from numba code.

``scipy.special.cython_special`` exports its float64 C routines as capsules; each is registered
with LLVM under a ``solar_sf_*`` symbol and called as an external function, so a kernel that uses
one compiles in nopython mode and still loads from numba's on-disk cache (the symbol, not an
address, is what the cached code names; importing this module registers it again). The orthogonal
polynomials and the Hurwitz zeta function are written here (three-term recurrences; Cephes'
Euler-Maclaurin sum), since SciPy exports no float64-degree form of them; ``*_ufunc`` are their
array forms for the point evaluator.
"""
from __future__ import annotations

import math

import llvmlite.binding as llvm
import numba
import numpy as np
from numba import types
from numba.extending import get_cython_function_address

_JIT = {"cache": True, "error_model": "numpy", "nogil": True}


def _bind(capi: str, arity: int) -> types.ExternalFunction:
    symbol = f"solar_sf_{capi.replace('__pyx_fuse_', 'f')}"
    llvm.add_symbol(symbol, get_cython_function_address("scipy.special.cython_special", capi))
    return types.ExternalFunction(symbol, types.float64(*([types.float64] * arity), types.intc))


_gammaln = _bind("gammaln", 1)
_psi = _bind("__pyx_fuse_1psi", 1)
_erfinv = _bind("__pyx_fuse_0erfinv", 1)
_erfcx = _bind("__pyx_fuse_1erfcx", 1)
_ndtri = _bind("ndtri", 1)
_log_ndtr = _bind("__pyx_fuse_1log_ndtr", 1)
_i0, _i0e, _i1, _i1e = (_bind(n, 1) for n in ("i0", "i0e", "i1", "i1e"))
_j0, _j1, _y0, _y1 = (_bind(n, 1) for n in ("j0", "j1", "y0", "y1"))
_k0, _k1, _k0e, _k1e = (_bind(n, 1) for n in ("k0", "k1", "k0e", "k1e"))
_gammainc = _bind("gammainc", 2)
_gammaincc = _bind("gammaincc", 2)
_betainc = _bind("__pyx_fuse_0betainc", 3)


@numba.njit(**_JIT)
def lgamma(x):
    return _gammaln(x, 0)


@numba.njit(**_JIT)
def digamma(x):
    return _psi(x, 0)


@numba.njit(**_JIT)
def erfinv(x):
    return _erfinv(x, 0)


@numba.njit(**_JIT)
def erfcx(x):
    return _erfcx(x, 0)


@numba.njit(**_JIT)
def ndtri(x):
    return _ndtri(x, 0)


@numba.njit(**_JIT)
def log_ndtr(x):
    return _log_ndtr(x, 0)


@numba.njit(**_JIT)
def bessel_i0(x):
    return _i0(x, 0)


@numba.njit(**_JIT)
def bessel_i0e(x):
    return _i0e(x, 0)


@numba.njit(**_JIT)
def bessel_i1(x):
    return _i1(x, 0)


@numba.njit(**_JIT)
def bessel_i1e(x):
    return _i1e(x, 0)


@numba.njit(**_JIT)
def bessel_j0(x):
    return _j0(x, 0)


@numba.njit(**_JIT)
def bessel_j1(x):
    return _j1(x, 0)


@numba.njit(**_JIT)
def bessel_y0(x):
    return _y0(x, 0)


@numba.njit(**_JIT)
def bessel_y1(x):
    return _y1(x, 0)


@numba.njit(**_JIT)
def bessel_k0(x):
    return _k0(x, 0)


@numba.njit(**_JIT)
def bessel_k1(x):
    return _k1(x, 0)


@numba.njit(**_JIT)
def bessel_k0e(x):
    return _k0e(x, 0)


@numba.njit(**_JIT)
def bessel_k1e(x):
    return _k1e(x, 0)


@numba.njit(**_JIT)
def gammainc(a, x):
    return _gammainc(a, x, 0)


@numba.njit(**_JIT)
def gammaincc(a, x):
    return _gammaincc(a, x, 0)


@numba.njit(**_JIT)
def betainc(a, b, x):
    return _betainc(a, b, x, 0)


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042e-16


@numba.njit(**_JIT)
def zeta(x, q):
    """Hurwitz zeta ``Σ_k (k + q)^-x`` (Cephes ``zeta``: a direct sum, then Euler-Maclaurin)."""
    if x == 1.0:
        return math.inf
    if x < 1.0 or x != x or q != q:
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    s = q ** -x
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if abs(b / s) < _MACHEP:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for j in range(12):
        a *= x + k
        b /= w
        t = a * b / _ZETA_A[j]
        s += t
        if abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


@numba.njit(**_JIT)
def _three_term(family, x, n):
    """Degree-``n`` member (``n`` truncated to an integer; 0 below degree 0) of an orthogonal
    polynomial family by its three-term recurrence ``p_{k+1} = (a_k x + b_k) p_k - c_k p_{k-1}``."""
    if n != n or x != x:
        return math.nan
    m = int(n)
    if m < 0:
        return 0.0
    # p_0 = 1 for every family; p_1 by family
    if family == 0:  # Chebyshev T
        p1 = x
    elif family == 1:  # Chebyshev U
        p1 = 2.0 * x
    elif family == 2:  # Chebyshev V
        p1 = 2.0 * x - 1.0
    elif family == 3:  # Chebyshev W
        p1 = 2.0 * x + 1.0
    elif family == 4:  # physicists' Hermite H
        p1 = 2.0 * x
    elif family == 5:  # probabilists' Hermite He
        p1 = x
    elif family == 6:  # Laguerre L
        p1 = 1.0 - x
    else:  # Legendre P
        p1 = x
    if m == 0:
        return 1.0
    p_prev, p = 1.0, p1
    for k in range(1, m):
        if family <= 3:
            nxt = 2.0 * x * p - p_prev
        elif family == 4:
            nxt = 2.0 * x * p - 2.0 * k * p_prev
        elif family == 5:
            nxt = x * p - k * p_prev
        elif family == 6:
            nxt = ((2.0 * k + 1.0 - x) * p - k * p_prev) / (k + 1.0)
        else:
            nxt = ((2.0 * k + 1.0) * x * p - k * p_prev) / (k + 1.0)
        p_prev, p = p, nxt
    return p


@numba.njit(**_JIT)
def chebyshev_t_poly(x, n):
    return _three_term(0, x, n)


@numba.njit(**_JIT)
def chebyshev_u_poly(x, n):
    return _three_term(1, x, n)


@numba.njit(**_JIT)
def chebyshev_v_poly(x, n):
    return _three_term(2, x, n)


@numba.njit(**_JIT)
def chebyshev_w_poly(x, n):
    return _three_term(3, x, n)


@numba.njit(**_JIT)
def hermite_h_poly(x, n):
    return _three_term(4, x, n)


@numba.njit(**_JIT)
def hermite_he_poly(x, n):
    return _three_term(5, x, n)


@numba.njit(**_JIT)
def laguerre_l_poly(x, n):
    return _three_term(6, x, n)


@numba.njit(**_JIT)
def legendre_p_poly(x, n):
    return _three_term(7, x, n)


def _ufunc(scalar):
    return np.vectorize(lambda *xs: scalar(*(float(v) for v in xs)), otypes=[np.float64])


zeta_ufunc = _ufunc(zeta)
chebyshev_t_poly_ufunc = _ufunc(chebyshev_t_poly)
chebyshev_u_poly_ufunc = _ufunc(chebyshev_u_poly)
chebyshev_v_poly_ufunc = _ufunc(chebyshev_v_poly)
chebyshev_w_poly_ufunc = _ufunc(chebyshev_w_poly)
hermite_h_poly_ufunc = _ufunc(hermite_h_poly)
hermite_he_poly_ufunc = _ufunc(hermite_he_poly)
laguerre_l_poly_ufunc = _ufunc(laguerre_l_poly)
legendre_p_poly_ufunc = _ufunc(legendre_p_poly)
