"""Dense linear-algebra routines of the IR's ``Linalg`` step, declared once: arguments, result
shapes, the standard operation count, and how the executor runs them.

A factorisation or solve is not a perfect loop nest (pivoting, convergence), so the IR names the
routine instead of spelling its loops, as it names ``TopK``. Every routine works on the last two
dims (matrices) and maps over the leading ones (a batch, the same for every argument). Its traffic
is its operands and results once (the compulsory bytes); its FLOPs are the standard LAPACK counts
for real arithmetic (LAPACK Working Note 41, Table 2.1 of Demmel et al. / the xGETRF … operation
counts; Golub & Van Loan, *Matrix Computations*, 4th ed., §8.3 and Fig. 8.6.1 for the iterative
symmetric eigensolver and the SVD), labelled ``LAPACK count`` wherever a figure is shown: a count of
the standard algorithm, which a different one (Strassen-like, a randomised SVD) may undercut.

``run`` executes a routine in float64 with NumPy / SciPy (their LAPACK), one matrix at a time.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Routine:
    """One routine: its operand count, result shapes, operation count and formula."""

    name: str
    n_args: int
    shapes: Callable[[list[Shape], dict[str, Any]], list[Shape]]
    flops_per_matrix: Callable[[list[Shape], dict[str, Any]], float]
    formula: str  # the count as printed in REPORT.md
    source: str
    result_dtypes: Callable[[dict[str, Any]], list[str | None]] = lambda options: []  # None: the first operand's
    matrix_first: bool = True  # the first operand is a (batch of) matrices; False: diagonals, a signal
    core_rank: int | None = 2  # trailing dims of the first operand one count covers (the rest a batch); None: all


def _mn(shape: Shape) -> tuple[int, int]:
    return int(shape[-2]), int(shape[-1])


def _getrf(m: int, n: int) -> float:
    """xGETRF on m×n (LAWN 41): mn² − n³/3 − n²/2 + 5n/6 for m ≥ n, the transpose's otherwise."""
    if m < n:
        m, n = n, m
    return m * n * n - n ** 3 / 3 - n * n / 2 + 5 * n / 6


def _geqrf(m: int, n: int) -> float:
    """xGEQRF on m×n (LAWN 41)."""
    if m >= n:
        return 2 * m * n * n - 2 * n ** 3 / 3 + m * n + n * n + 14 * n / 3
    return 2 * n * m * m - 2 * m ** 3 / 3 + 3 * m * n - m * m + 14 * m / 3


def _orgqr(m: int, n: int, k: int) -> float:
    """xORGQR: the m×n Q from k reflectors (LAWN 41)."""
    return 4 * m * n * k - 2 * (m + n) * k * k + 4 * k ** 3 / 3 + 3 * n * k - m * k - k * k - 4 * k / 3


def _potrf(n: int) -> float:
    return n ** 3 / 3 + n * n / 2 + n / 6


def _svd(m: int, n: int, vectors: bool, full: bool) -> float:
    """Golub–Reinsch SVD (Golub & Van Loan, Fig. 8.6.1): Σ only 4mn² − 4n³/3; thin U, Σ, V
    14mn² + 8n³; full U 4m²n + 8mn² + 9n³ (m ≥ n, else the transpose's)."""
    if m < n:
        m, n = n, m
    if not vectors:
        return 4 * m * n * n - 4 * n ** 3 / 3
    return 4 * m * m * n + 8 * m * n * n + 9 * n ** 3 if full else 14 * m * n * n + 8 * n ** 3


def _qr_shapes(shapes: list[Shape], options: dict[str, Any]) -> list[Shape]:
    *batch, m, n = shapes[0]
    k = min(m, n)
    mode = options.get("mode", "reduced")
    if mode == "complete":
        return [(*batch, m, m), (*batch, m, n)]
    if mode == "r":
        return [(0,), (*batch, k, n)]
    return [(*batch, m, k), (*batch, k, n)]


def _qr_flops(shapes: list[Shape], options: dict[str, Any]) -> float:
    m, n = _mn(shapes[0])
    k = min(m, n)
    mode = options.get("mode", "reduced")
    q = 0.0 if mode == "r" else _orgqr(m, m if mode == "complete" else k, k)
    return _geqrf(m, n) + q


def _svd_shapes(shapes: list[Shape], options: dict[str, Any]) -> list[Shape]:
    *batch, m, n = shapes[0]
    k = min(m, n)
    if options.get("full_matrices", False):
        return [(*batch, m, m), (*batch, k), (*batch, n, n)]
    return [(*batch, m, k), (*batch, k), (*batch, k, n)]


def _solve_rhs(shapes: list[Shape]) -> int:
    return int(shapes[1][-1])


def _fft_points(shapes: list[Shape], options: dict[str, Any], sizes_of: Shape) -> tuple[int, int]:
    """(points per transform, transforms): the product of the transformed dims' sizes (of
    ``sizes_of``), and of the other dims."""
    dims = [int(d) for d in options.get("dims", ())]
    n = 1
    for d in dims:
        n *= int(sizes_of[d])
    total = 1
    for size in sizes_of:
        total *= int(size)
    return n, total // max(n, 1)


def _fft_flops(n: int, transforms: int, real: bool) -> float:
    """The standard 5·N·log₂N real FLOPs per complex transform of N points (half for a real one)."""
    import math

    if n <= 1:
        return 0.0
    return transforms * (2.5 if real else 5.0) * n * math.log2(n)


def _r2c_shapes(shapes: list[Shape], options: dict[str, Any]) -> list[Shape]:
    out = list(shapes[0])
    dims = [int(d) for d in options.get("dims", ())]
    if dims and options.get("onesided", True):
        out[dims[-1]] = out[dims[-1]] // 2 + 1
    return [tuple(out), tuple(out)]


def _c2r_shapes(shapes: list[Shape], options: dict[str, Any]) -> list[Shape]:
    out = list(shapes[0])
    out[int(options["dims"][-1])] = int(options["last_dim_size"])
    return [tuple(out)]


_SELECTION = "0 (comparisons and data movement; the result's length from the sample's values)"
_SELECTION_SOURCE = "a selection: its traffic is its operands and results once"


def _broadcast(*shapes: Shape) -> Shape:
    return tuple(int(d) for d in np.broadcast_shapes(*shapes))


def _unique_shapes(shapes: list[Shape], options: dict[str, Any]) -> list[Shape]:
    """The distinct values, the index of each element's value (the operand's shape) and each
    value's count; an output not asked for is empty, as PyTorch returns it."""
    count = int(options["count"])
    return [(count,), shapes[0] if options.get("return_inverse") else (0,),
            (count,) if options.get("return_counts") else (0,)]


def _ormqr(shapes: list[Shape], options: dict[str, Any]) -> float:
    """xORMQR (LAWN 41): C (m×n) times Q from k reflectors, from the left or the right."""
    m, n = _mn(shapes[2])
    k = int(shapes[1][-1])
    if options.get("left", True):
        return 4 * n * m * k - 2 * n * k * k + 3 * n * k
    return 4 * n * m * k - 2 * m * k * k + 3 * m * k


ROUTINES: dict[str, Routine] = {r.name: r for r in [
    Routine("cholesky", 1, lambda s, o: [s[0]], lambda s, o: _potrf(_mn(s[0])[0]),
            "n³/3 + n²/2 + n/6", "LAWN 41, xPOTRF"),
    Routine("cholesky_solve", 2, lambda s, o: [s[0]], lambda s, o: 2.0 * _mn(s[1])[0] ** 2 * _mn(s[0])[1],
            "2n²k (B n×k)", "LAWN 41, xPOTRS"),
    Routine("cholesky_inverse", 1, lambda s, o: [s[0]],
            lambda s, o: 2 * _mn(s[0])[0] ** 3 / 3 + _mn(s[0])[0] ** 2 / 2 + _mn(s[0])[0] / 6,
            "2n³/3 + n²/2 + n/6", "LAWN 41, xPOTRI"),
    Routine("triangular_solve", 2, lambda s, o: [s[1]],
            lambda s, o: float(_mn(s[0])[0]) ** 2 * (s[1][-1] if o.get("left", True) else s[1][-2]),
            "n²k (A n×n, B with k right-hand sides)", "LAWN 41, xTRSM"),
    Routine("lu_factor", 1, lambda s, o: [s[0], (*s[0][:-2], min(_mn(s[0])))], lambda s, o: _getrf(*_mn(s[0])),
            "mn² − n³/3 − n²/2 + 5n/6 (m ≥ n)", "LAWN 41, xGETRF", lambda o: [None, "int32"]),
    Routine("lu_jax", 1, lambda s, o: [s[0], (*s[0][:-2], min(_mn(s[0]))), (*s[0][:-2], s[0][-2])],
            lambda s, o: _getrf(*_mn(s[0])), "mn² − n³/3 − n²/2 + 5n/6 (m ≥ n)", "LAWN 41, xGETRF",
            lambda o: [None, "int32", "int32"]),
    Routine("lu", 1,
            lambda s, o: [(*s[0][:-2], s[0][-2], s[0][-2]), (*s[0][:-2], s[0][-2], min(_mn(s[0]))),
                          (*s[0][:-2], min(_mn(s[0])), s[0][-1])],
            lambda s, o: _getrf(*_mn(s[0])), "mn² − n³/3 − n²/2 + 5n/6 (m ≥ n)", "LAWN 41, xGETRF"),
    Routine("lu_solve", 3, lambda s, o: [s[2]], lambda s, o: 2.0 * _mn(s[0])[0] ** 2 * s[2][-1],
            "2n²k", "LAWN 41, xGETRS"),
    Routine("solve", 2, lambda s, o: [s[1]],
            lambda s, o: _getrf(*_mn(s[0])) + 2.0 * _mn(s[0])[0] ** 2 * s[1][-1],
            "2n³/3 − n²/2 + 5n/6 + 2n²k", "LAWN 41, xGETRF + xGETRS"),
    Routine("inv", 1, lambda s, o: [s[0]],
            lambda s, o: 2 * _mn(s[0])[0] ** 3 - 1.5 * _mn(s[0])[0] ** 2 + 2.5 * _mn(s[0])[0],
            "2n³ − 3n²/2 + 5n/2", "LAWN 41, xGETRF + xGETRI"),
    Routine("det", 1, lambda s, o: [s[0][:-2]], lambda s, o: _getrf(*_mn(s[0])) + _mn(s[0])[0],
            "2n³/3 − n²/2 + 5n/6 + n", "LAWN 41, xGETRF, then the diagonal's product"),
    Routine("slogdet", 1, lambda s, o: [s[0][:-2], s[0][:-2]], lambda s, o: _getrf(*_mn(s[0])) + 2 * _mn(s[0])[0],
            "2n³/3 − n²/2 + 5n/6 + 2n", "LAWN 41, xGETRF, then the diagonal's signs and logs"),
    Routine("qr", 1, _qr_shapes, _qr_flops, "geqrf 2mn² − 2n³/3 + …, orgqr 4mnk − 2(m+n)k² + 4k³/3 + …",
            "LAWN 41, xGEQRF + xORGQR"),
    Routine("eigh", 1, lambda s, o: [s[0][:-1], s[0]], lambda s, o: 9.0 * _mn(s[0])[0] ** 3,
            "9n³", "Golub & Van Loan §8.3 (symmetric QR, eigenvalues and vectors)"),
    Routine("eigvalsh", 1, lambda s, o: [s[0][:-1]], lambda s, o: 4.0 * _mn(s[0])[0] ** 3 / 3,
            "4n³/3", "Golub & Van Loan §8.3 (symmetric QR, eigenvalues only)"),
    Routine("svd", 1, _svd_shapes, lambda s, o: _svd(*_mn(s[0]), True, bool(o.get("full_matrices", False))),
            "thin 14mn² + 8n³, full 4m²n + 8mn² + 9n³", "Golub & Van Loan Fig. 8.6.1 (Golub–Reinsch)"),
    Routine("svdvals", 1, lambda s, o: [(*s[0][:-2], min(_mn(s[0])))], lambda s, o: _svd(*_mn(s[0]), False, False),
            "4mn² − 4n³/3", "Golub & Van Loan Fig. 8.6.1 (Golub–Reinsch, Σ only)"),
    Routine("lu_unpack", 2,
            lambda s, o: [(*s[0][:-2], s[0][-2], s[0][-2]), (*s[0][:-2], s[0][-2], min(_mn(s[0]))),
                          (*s[0][:-2], min(_mn(s[0])), s[0][-1])],
            lambda s, o: 0.0, "0 (data movement)", "—"),
    Routine("geqrf", 1, lambda s, o: [s[0], (*s[0][:-2], min(_mn(s[0])))], lambda s, o: _geqrf(*_mn(s[0])),
            "2mn² − 2n³/3 + mn + n² + 14n/3 (m ≥ n)", "LAWN 41, xGEQRF"),
    Routine("householder_product", 2, lambda s, o: [s[0]],
            lambda s, o: _orgqr(*_mn(s[0]), int(s[1][-1])), "4mnk − 2(m+n)k² + 4k³/3 + 3nk − mk − k² − 4k/3",
            "LAWN 41, xORGQR"),
    Routine("ormqr", 3, lambda s, o: [s[2]], _ormqr, "left 4nmk − 2nk² + 3nk, right 4nmk − 2mk² + 3mk",
            "LAWN 41, xORMQR"),
    Routine("ldl_factor", 1, lambda s, o: [s[0], s[0][:-1]], lambda s, o: _mn(s[0])[0] ** 3 / 3 + _mn(s[0])[0] ** 2 / 2,
            "n³/3 + n²/2", "LAWN 41, xSYTRF", lambda o: [None, "int32"]),
    Routine("ldl_solve", 3, lambda s, o: [s[2]], lambda s, o: 2.0 * _mn(s[0])[0] ** 2 * s[2][-1],
            "2n²k", "LAWN 41, xSYTRS"),
    Routine("matrix_exp", 1, lambda s, o: [s[0]], lambda s, o: 4.0 * _mn(s[0])[0] ** 3 + 8.0 * _mn(s[0])[0] ** 3 / 3,
            "4n³ + 8n³/3 (two products and one solve: Padé [3/3] without squaring, the least of Higham's scheme)",
            "Higham, SIAM J. Matrix Anal. Appl. 26 (2005)"),
    Routine("tridiagonal_solve", 4, lambda s, o: [s[3]], lambda s, o: (8.0 * s[1][-1] - 7) * s[3][-1],
            "(8n − 7)k", "Thomas algorithm (Golub & Van Loan §4.3.6)", matrix_first=False, core_rank=1),
    Routine("fft_r2c", 1, _r2c_shapes, lambda s, o: _fft_flops(*_fft_points(s, o, s[0]), real=True),
            "2.5·N·log₂N per transform of N real points", "the radix-2 count 5N log₂N of a complex FFT, halved",
            matrix_first=False, core_rank=None),
    Routine("fft_c2c", 2, lambda s, o: [s[0], s[0]], lambda s, o: _fft_flops(*_fft_points(s, o, s[0]), real=False),
            "5·N·log₂N per transform of N complex points", "the radix-2 Cooley–Tukey count (Van Loan, 1992)",
            matrix_first=False, core_rank=None),
    Routine("fft_c2r", 2, _c2r_shapes,
            lambda s, o: _fft_flops(*_fft_points(s, o, _c2r_shapes(s, o)[0]), real=True),
            "2.5·N·log₂N per transform of N real points", "the radix-2 count 5N log₂N of a complex FFT, halved",
            matrix_first=False, core_rank=None),
    Routine("eig", 1,
            lambda s, o: ([s[0][:-1], s[0][:-1]] + ([s[0], s[0]] if o.get("left_vectors") else [])
                          + ([s[0], s[0]] if o.get("right_vectors", True) else [])),
            lambda s, o: (25.0 if (o.get("left_vectors") or o.get("right_vectors", True)) else 10.0) * _mn(s[0])[0] ** 3,
            "10n³ eigenvalues, 25n³ with eigenvectors",
            "Golub & Van Loan §7.5.6 (Hessenberg QR); results as real and imaginary planes"),
    Routine("pinv", 1, lambda s, o: [(*s[0][:-2], s[0][-1], s[0][-2])],
            lambda s, o: _svd(*_mn(s[0]), True, False) + 2.0 * _mn(s[0])[0] * _mn(s[0])[1] * min(_mn(s[0])),
            "thin SVD + 2mnk", "Golub & Van Loan Fig. 8.6.1, then V Σ⁺ Uᵀ"),
    *(Routine(name, n_args, shapes, lambda s, o: 0.0, _SELECTION, _SELECTION_SOURCE, dtypes, matrix_first=False,
              core_rank=None) for name, n_args, shapes, dtypes in (
        ("nonzero", 1, lambda s, o: [(int(o["count"]), len(s[0]))], lambda o: ["int64"]),
        ("masked_select", 2, lambda s, o: [(int(o["count"]),)], lambda o: []),
        ("unique", 1, _unique_shapes, lambda o: [None, "int64", "int64"]),
        ("unique_consecutive", 1, _unique_shapes, lambda o: [None, "int64", "int64"]),
        ("masked_scatter", 3, lambda s, o: [_broadcast(s[0], s[1])], lambda o: []),
    )),
]}
DATA_SHAPED = ("nonzero", "masked_select", "unique", "unique_consecutive")
"""The routines whose result length (``count``) the sample's values decided."""


def result_shapes(routine: str, arg_shapes: Sequence[Shape], options: dict[str, Any]) -> list[Shape]:
    return [tuple(int(d) for d in s) for s in ROUTINES[routine].shapes([tuple(s) for s in arg_shapes], options)]


def flops(routine: str, arg_shapes: Sequence[Shape], options: dict[str, Any]) -> int:
    """The routine's LAPACK count over every matrix of the batch."""
    shapes = [tuple(s) for s in arg_shapes]
    batch, core = 1, ROUTINES[routine].core_rank
    for d in (shapes[0][:-core] if core else ()):
        batch *= int(d)
    return int(round(batch * max(ROUTINES[routine].flops_per_matrix(shapes, options), 0.0)))


# --- execution (float64, one matrix at a time) -----------------------------------------------------

def _per_matrix(fn: Callable[..., Any], args: list[np.ndarray], n_out: int) -> list[np.ndarray]:
    batch = args[0].shape[:-2]
    results: list[list[np.ndarray]] = [[] for _ in range(n_out)]
    for pos in np.ndindex(*batch):
        outs = fn(*[a[pos] for a in args])
        outs = outs if isinstance(outs, tuple) else (outs,)
        for k, o in enumerate(outs):
            results[k].append(np.asarray(o))
    return [np.stack(r).reshape(*batch, *r[0].shape) if r else np.zeros(batch) for r in results]


def run(routine: str, args: list[np.ndarray], options: dict[str, Any]) -> list[np.ndarray]:
    """The routine's results, as the frameworks define them (pivots 1-based, as LAPACK and PyTorch)."""
    import scipy.linalg as sl

    upper = bool(options.get("upper", False))
    a = [np.asarray(x, dtype=np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in args]
    if routine == "cholesky":  # from the triangle the flag names: Uᵀ is the lower factor of Aᵀ
        if upper:
            return [np.swapaxes(np.linalg.cholesky(np.swapaxes(a[0], -1, -2)), -1, -2)]
        return [np.linalg.cholesky(a[0])]
    if routine == "cholesky_solve":
        return _per_matrix(lambda b, c: sl.cho_solve((c, not upper), b), [a[0], a[1]], 1)
    if routine == "cholesky_inverse":
        def inverse(c):
            full = c.T @ c if upper else c @ c.T
            return np.linalg.inv(full)
        return _per_matrix(inverse, [a[0]], 1)
    if routine == "triangular_solve":
        left, unit = bool(options.get("left", True)), bool(options.get("unitriangular", False))

        def tri(m, b):
            m = np.triu(m) if upper else np.tril(m)
            if unit:
                np.fill_diagonal(m, 1.0)
            if left:
                return sl.solve_triangular(m, b, lower=not upper, unit_diagonal=unit)
            return sl.solve_triangular(m.T, b.T, lower=upper, unit_diagonal=unit).T
        return _per_matrix(tri, [a[0], a[1]], 1)
    if routine == "lu_factor":
        def factor(m):
            lu, piv = sl.lu_factor(m, check_finite=False)
            return lu, (piv + 1).astype(np.int32)
        return _per_matrix(factor, [a[0]], 2)
    if routine == "lu_jax":  # lax.linalg.lu: LU, 0-based pivots, the rows' permutation
        def factor_jax(m):
            lu, piv = sl.lu_factor(m, check_finite=False)
            perm = np.arange(m.shape[0])
            for i, p in enumerate(piv):
                perm[[i, p]] = perm[[p, i]]
            return lu, piv.astype(np.int32), perm.astype(np.int32)
        return _per_matrix(factor_jax, [a[0]], 3)
    if routine.startswith("fft_"):
        return _fft(routine, a, options)
    if routine in ("nonzero", "masked_select", "unique", "unique_consecutive", "masked_scatter"):
        return _selection(routine, a, options)
    if routine == "eig":  # w, then the left / right eigenvectors asked for: each as two planes
        left, right = bool(options.get("left_vectors")), bool(options.get("right_vectors", True))

        def eig(m):
            w, vl, vr = sl.eig(m, left=True, right=True) if m.size else (np.zeros(0, complex),) + (
                np.zeros((0, 0), complex),) * 2
            parts = [w.real, w.imag]
            for wanted, v in ((left, vl), (right, vr)):
                if wanted:
                    parts += [v.real, v.imag]
            return tuple(parts)
        return _per_matrix(eig, [a[0]], 2 + 2 * left + 2 * right)
    if routine == "lu_unpack":
        def unpack(lu, piv):
            m, n = lu.shape
            k = min(m, n)
            lower = np.tril(lu[:, :k], -1) + np.eye(m, k)
            upper = np.triu(lu[:k, :])
            rows = np.eye(m)
            for i, p in enumerate(piv.astype(np.int64) - 1):  # Pᵀ A = L U: the row swaps applied in order
                rows[[i, p]] = rows[[p, i]]
            return rows.T, lower, upper
        return _per_matrix(unpack, [a[0], a[1]], 3)
    if routine == "geqrf":
        from scipy.linalg import lapack
        return _per_matrix(lambda m: tuple(lapack.dgeqrf(m)[:2]), [a[0]], 2)
    if routine == "householder_product":
        from scipy.linalg import lapack
        return _per_matrix(lambda m, tau: lapack.dorgqr(m, tau)[0], [a[0], a[1]], 1)
    if routine == "ormqr":
        from scipy.linalg import lapack
        side, trans = ("L" if options.get("left", True) else "R"), ("T" if options.get("adjoint", False) else "N")

        return _per_matrix(lambda m, tau, c: lapack.dormqr(side, trans, m, tau, c, max(1, 64 * max(c.shape)))[0],
                           [a[0], a[1], a[2]], 1)
    if routine == "ldl_factor":
        from scipy.linalg import lapack
        def ldl(m):  # the factor's own triangle; PyTorch zeroes the other (LAPACK leaves the operand's)
            ld, piv = lapack.dsytrf(m, lower=0 if upper else 1)[:2]
            return (np.triu(ld) if upper else np.tril(ld)), piv.astype(np.int32)
        return _per_matrix(ldl, [a[0]], 2)
    if routine == "ldl_solve":
        from scipy.linalg import lapack
        return _per_matrix(lambda ld, piv, b: lapack.dsytrs(ld, piv.astype(np.int32), b, lower=0 if upper else 1)[0],
                           [a[0], a[1], a[2]], 1)
    if routine == "matrix_exp":
        return _per_matrix(sl.expm, [a[0]], 1)
    if routine == "tridiagonal_solve":
        def thomas(dl, d, du, b):
            n = d.shape[0]
            banded = np.zeros((3, n))
            banded[0, 1:], banded[1], banded[2, :-1] = du[:-1], d, dl[1:]
            return sl.solve_banded((1, 1), banded, b)
        batch = a[1].shape[:-1]
        out = np.stack([thomas(a[0][p], a[1][p], a[2][p], a[3][p]) for p in np.ndindex(*batch)]) if batch else \
            thomas(a[0], a[1], a[2], a[3])
        return [out.reshape(a[3].shape)]
    if routine == "lu":
        return _per_matrix(lambda m: tuple(sl.lu(m, check_finite=False)), [a[0]], 3)
    if routine == "lu_solve":
        adjoint, left = bool(options.get("adjoint", False)), bool(options.get("left", True))
        if not left:
            raise ValueError("lu_solve with left=False is not executed")
        return _per_matrix(lambda lu, piv, b: sl.lu_solve((lu, piv.astype(np.int64) - 1), b, trans=1 if adjoint else 0,
                                                          check_finite=False), [a[0], a[1], a[2]], 1)
    if routine == "solve":
        if not options.get("left", True):
            return [np.swapaxes(np.linalg.solve(np.swapaxes(a[0], -1, -2), np.swapaxes(a[1], -1, -2)), -1, -2)]
        return [np.linalg.solve(a[0], a[1])]
    if routine == "inv":
        return [np.linalg.inv(a[0])]
    if routine == "det":
        return [np.asarray(np.linalg.det(a[0]))]
    if routine == "slogdet":
        sign, logabs = np.linalg.slogdet(a[0])
        return [np.asarray(sign), np.asarray(logabs)]
    if routine == "qr":
        mode = options.get("mode", "reduced")
        if mode == "r":
            return [np.zeros((0,)), np.linalg.qr(a[0], mode="r")]
        q, r = np.linalg.qr(a[0], mode="complete" if mode == "complete" else "reduced")
        return [q, r]
    if routine == "eigh":
        w, v = np.linalg.eigh(a[0], UPLO="U" if upper else "L")
        return [w, v]
    if routine == "eigvalsh":
        return [np.linalg.eigvalsh(a[0], UPLO="U" if upper else "L")]
    if routine == "svd":
        u, s, vh = np.linalg.svd(a[0], full_matrices=bool(options.get("full_matrices", False)))
        return [u, s, vh]
    if routine == "svdvals":
        return [np.linalg.svd(a[0], compute_uv=False)]
    if routine == "pinv":
        return [np.linalg.pinv(a[0], rtol=options.get("rtol"), hermitian=bool(options.get("hermitian", False)))]
    raise ValueError(f"unknown linalg routine {routine!r}")


def _selection(routine: str, a: list[np.ndarray], options: dict[str, Any]) -> list[np.ndarray]:
    """The selections as PyTorch defines them (row-major order; ``unique`` sorted)."""
    if routine == "nonzero":
        return [np.argwhere(a[0] != 0).astype(np.int64).reshape(-1, a[0].ndim)]
    if routine == "masked_select":
        x, mask = np.broadcast_arrays(a[0], a[1] != 0)
        return [x[mask]]
    if routine == "masked_scatter":
        x, mask = np.broadcast_arrays(a[0], a[1] != 0)
        out = np.array(x, copy=True)
        out[mask] = a[2].reshape(-1)[:int(mask.sum())]
        return [out]
    flat = a[0].reshape(-1)
    if routine == "unique":
        values, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
    else:  # runs of equal neighbours, in order
        starts = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        values = flat[starts]
        inverse = np.cumsum(starts) - 1
        counts = np.diff(np.append(np.flatnonzero(starts), flat.size))
    inverse = inverse.reshape(a[0].shape) if options.get("return_inverse") else np.zeros(0)
    counts = counts if options.get("return_counts") else np.zeros(0)
    return [values, inverse.astype(np.int64), np.asarray(counts, dtype=np.int64)]


def _fft(routine: str, a: list[np.ndarray], options: dict[str, Any]) -> list[np.ndarray]:
    """PyTorch's ``_fft_*`` semantics: the unscaled transform, then scaled by 1, 1/sqrt(n) or 1/n."""
    axes = tuple(int(d) for d in options["dims"])
    if routine == "fft_r2c":
        x = a[0]
        z = np.fft.rfftn(x, axes=axes) if options.get("onesided", True) else np.fft.fftn(x, axes=axes)
        n = int(np.prod([x.shape[d] for d in axes]))
    elif routine == "fft_c2c":
        z = a[0] + 1j * a[1]
        z = np.fft.fftn(z, axes=axes) if options.get("forward", True) else np.fft.ifftn(z, axes=axes, norm="forward")
        n = int(np.prod([z.shape[d] for d in axes]))
    else:
        z = a[0] + 1j * a[1]
        sizes = [z.shape[d] for d in axes[:-1]] + [int(options["last_dim_size"])]
        out = np.fft.irfftn(z, s=sizes, axes=axes, norm="forward")
        n = int(np.prod(sizes))
        return [out * _fft_scale(options, n)]
    scale = _fft_scale(options, n)
    return [z.real * scale, z.imag * scale]


def _fft_scale(options: dict[str, Any], n: int) -> float:
    mode = int(options.get("normalization", 0))
    return 1.0 if mode == 0 or n == 0 else (1.0 / np.sqrt(n) if mode == 1 else 1.0 / n)
